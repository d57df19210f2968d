import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One field a collection's records carry besides id, version and update time, as its
/// declaration names it: its name, the JSON it holds, and whether a record must have it. The
/// command line reads `--field name=value` through it; a write is checked against it before it is
/// saved, so a typing mistake is refused here instead of by the server after the replay.
package struct RecordField: Sendable, Equatable, Codable {
  /// The JSON a field holds.
  package enum Kind: String, Sendable, Codable, CaseIterable {
    /// A JSON string (`--field title=Hello` on the command line: the text as given).
    case string
    /// A whole number.
    case integer
    /// Any number.
    case number
    /// `true` or `false`.
    case boolean
    /// A list of strings (`--field tags=a,b` on the command line).
    case strings
    /// Any JSON value (`--field meta='{"a":1}'` on the command line).
    case json
  }

  /// The member's name in the record's JSON object.
  package var name: String
  /// What it holds.
  package var kind: Kind
  /// Whether every record must have it (and not `null`).
  package var required: Bool

  /// Declares a field.
  /// - Parameters:
  ///   - name: the member's name.
  ///   - kind: what it holds.
  ///   - required: whether a record must have it.
  package init(_ name: String, _ kind: Kind, required: Bool = false) {
    self.name = name
    self.kind = kind
    self.required = required
  }

  /// Reads a value typed on a command line as this field's JSON: a string as it is, numbers and
  /// booleans by their spelling, a list split at commas (an empty text is an empty list), JSON as
  /// JSON text.
  /// - Parameter text: the text after `name=`.
  /// - Returns: the value.
  /// - Throws: `CourierError` of kind `invalidInput` naming the field and what it expects.
  package func value(parsing text: String) throws -> JSONValue {
    func refuse(_ expected: String) -> CourierError {
      CourierError(
        .invalidInput, code: "invalid_field",
        serverMessage: "The field “\(name)” takes \(expected), not “\(Self.shown(text))”.",
        field: name)
    }
    let trimmed = text.trimmingSpacesAndTabs()
    switch kind {
    case .string:
      return .string(text)
    case .integer:
      guard let number = Int64(trimmed) else { throw refuse("a whole number") }
      return .integer(number)
    case .number:
      guard let number = Double(trimmed), number.isFinite else { throw refuse("a number") }
      if let whole = Int64(exactly: number), !trimmed.contains(".") { return .integer(whole) }
      return .number(number)
    case .boolean:
      switch trimmed.lowercased() {
      case "true", "yes", "1": return .bool(true)
      case "false", "no", "0": return .bool(false)
      default: throw refuse("true or false")
      }
    case .strings:
      if trimmed.isEmpty { return .array([]) }
      return .array(
        text.split(separator: ",", omittingEmptySubsequences: false).map {
          .string($0.trimmingSpacesAndTabs())
        })
    case .json:
      guard let value = try? JSONValue(parsing: Data(text.utf8)) else { throw refuse("JSON") }
      return value
    }
  }

  /// Whether a value is of this field's kind (`null` is never, for a field present).
  /// - Parameter value: the value.
  /// - Returns: true when it fits.
  package func accepts(_ value: JSONValue) -> Bool {
    switch (kind, value) {
    case (.json, _): return true
    case (.string, .string), (.integer, .integer), (.number, .integer), (.number, .number),
      (.boolean, .bool):
      return true
    case (.strings, .array(let items)):
      return items.allSatisfy { if case .string = $0 { return true } else { return false } }
    default: return false
    }
  }

  /// A value as shown in an error: at most 40 characters, control characters escaped.
  static func shown(_ text: String) -> String {
    var prefix = ""
    prefix.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(40))
    return LogText.escaped(prefix) + (text.unicodeScalars.count > 40 ? "…" : "")
  }
}
