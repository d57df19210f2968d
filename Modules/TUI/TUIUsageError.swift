/// A usage error: the sentence to print before the help; the process exits 64.
public struct TUIUsageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, for a person.
  public var message: String

  /// Creates an error.
  /// - Parameter message: what is wrong.
  public init(message: String) { self.message = message }

  /// The message.
  public var description: String { message }
}
