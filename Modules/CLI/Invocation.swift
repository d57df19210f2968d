/// A whole command line, parsed.
public struct Invocation: Sendable, Equatable {
  /// Global options.
  public var global: GlobalOptions
  /// The command.
  public var command: Command

  /// Creates an invocation.
  /// - Parameters:
  ///   - global: global options.
  ///   - command: the command.
  public init(global: GlobalOptions, command: Command) {
    self.global = global
    self.command = command
  }
}
