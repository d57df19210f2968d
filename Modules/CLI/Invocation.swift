/// A whole command line, parsed: the command to run, with its options and the global ones.
package struct Invocation: Sendable {
  /// The command, as swift-argument-parser parsed it.
  package let command: any CourierSubcommand

  /// Wraps a parsed command.
  /// - Parameter command: the command.
  package init(_ command: any CourierSubcommand) { self.command = command }

  /// The global options.
  package var global: GlobalOptions { command.global }

  /// Whether its task runs on the calling thread (`CourierSubcommand.runsOnCallingThread`).
  package var runsOnCallingThread: Bool { type(of: command).runsOnCallingThread }
}
