import HTTPTypes

extension HTTPField.Name {
  /// A field name a test spells out and knows to be a token (`X-Trace`).
  /// - Parameter name: the name.
  /// - Returns: the field name.
  package static func named(_ name: String) -> HTTPField.Name {
    guard let valid = HTTPField.Name(name) else { preconditionFailure("not a token: \(name)") }
    return valid
  }
}
