import CourierSignals
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why the terminal could not be prepared.
package struct TerminalError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The sentence for a person.
  package var message: String
  /// The `errno` of the failing call, when there was one.
  package var errno: Int32?

  /// Creates an error.
  /// - Parameters:
  ///   - message: the sentence for a person.
  ///   - errno: the failing call's `errno`.
  package init(message: String, errno: Int32? = nil) {
    self.message = message
    self.errno = errno
  }

  /// The message.
  package var description: String { message }

  /// Standard input or output is not a terminal.
  package static let notATerminal = TerminalError(
    message:
      "courier-tui needs an interactive terminal: its input and output must be a TTY. "
      + "For scripts and pipes, use `courier` instead.")
}
