/// A command line that cannot be understood: exit 64 with this message and the command's usage.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong.
  package var message: String
  /// The command whose usage to show, if known.
  package var command: String?

  /// Creates an error.
  /// - Parameters:
  ///   - message: what is wrong.
  ///   - command: the command concerned.
  package init(_ message: String, command: String? = nil) {
    self.message = message
    self.command = command
  }

  /// The message.
  package var description: String { message }
}
