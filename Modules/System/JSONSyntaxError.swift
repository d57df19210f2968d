/// Why some bytes are not JSON, or are JSON nested deeper than the reader takes.
package struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The byte offset where reading stopped.
  package var offset: Int
  /// What was wrong there.
  package var reason: String
  /// For a text refused for its nesting alone: the steps from the top to the value that opened
  /// one level too many (`[0, "meta"]`: member `meta` of the first element). Nil for a text
  /// that is not JSON.
  package var tooDeepAt: [JSONPathStep]?

  /// An error at a byte.
  /// - Parameters:
  ///   - offset: the byte offset.
  ///   - reason: what was wrong there.
  ///   - tooDeepAt: the path to the value nested too deep, for a nesting refusal.
  @inlinable
  package init(offset: Int, reason: String, tooDeepAt: [JSONPathStep]? = nil) {
    self.offset = offset
    self.reason = reason
    self.tooDeepAt = tooDeepAt
  }

  /// A readable account.
  package var description: String {
    guard let tooDeepAt else { return "not JSON at byte \(offset): \(reason)" }
    let path = tooDeepAt.isEmpty ? "" : " at \(JSONPathStep.text(tooDeepAt))"
    return "JSON \(reason)\(path) (byte \(offset))"
  }
}

/// One step from the top of a JSON text to a value inside it.
package enum JSONPathStep: Sendable, Hashable, CustomStringConvertible {
  /// An object's member, by name.
  case member(String)
  /// An array's element, by position from 0.
  case element(Int)

  /// `[3]` or `.name`.
  package var description: String {
    switch self {
    case .member(let name): ".\(name)"
    case .element(let index): "[\(index)]"
    }
  }

  /// A path as `[3].meta[0]`; `$` for the top.
  /// - Parameter steps: the steps.
  /// - Returns: the text.
  package static func text(_ steps: [JSONPathStep]) -> String {
    steps.isEmpty ? "$" : steps.map(\.description).joined()
  }
}
