/// A command line that cannot be understood: exit 64 with this message and the command's usage.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong.
  public var message: String
  /// The command whose usage to show, if known.
  public var command: String?

  /// Creates an error.
  /// - Parameters:
  ///   - message: what is wrong.
  ///   - command: the command concerned.
  public init(_ message: String, command: String? = nil) {
    self.message = message
    self.command = command
  }

  /// The message.
  public var description: String { message }
}
