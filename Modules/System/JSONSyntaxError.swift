/// Why some bytes are not JSON.
package struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The byte offset where reading stopped.
  package var offset: Int
  /// What was wrong there.
  package var reason: String

  /// An error at a byte.
  /// - Parameters:
  ///   - offset: the byte offset.
  ///   - reason: what was wrong there.
  @inlinable
  package init(offset: Int, reason: String) {
    self.offset = offset
    self.reason = reason
  }

  /// A readable account.
  package var description: String { "not JSON at byte \(offset): \(reason)" }
}
