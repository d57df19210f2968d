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
  /// For a string field, how many characters its text may hold (Unicode scalars, as JSON
  /// Schema's `minLength` and `maxLength` and the reference backend count them); a text of
  /// white space alone counts as empty. Nil: any length. Checked before a write is saved, so
  /// a title the server would refuse is refused here, not queued (decision 2427).
  package var length: ClosedRange<Int>?

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
      // Digits as typed, of any size; within 64 bits as Int64 reads them (`+7`, `007`).
      if let number = Int64(trimmed) { return .integer(number) }
      guard let number = JSONNumber(trimmed), number.isWhole, !trimmed.contains("."),
        !trimmed.lowercased().contains("e")
      else { throw refuse("a whole number") }
      return .number(number)
    case .number:
      // JSON's spelling is kept as typed (`0.10`, `1e400`); any other Double reads (`.5`, `1.`)
      // as that Double.
      if let number = JSONNumber(trimmed) { return .number(number) }
      guard let number = Double(trimmed).flatMap(JSONNumber.init) else {
        throw refuse("a number")
      }
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
      do {
        return try JSONValue(parsing: Data(text.utf8))
      } catch {
        guard error.tooDeepAt == nil else {
          throw refuse("JSON nested at most \(JSONValue.maximumDepth) levels deep")
        }
        throw refuse("JSON")
      }
    }
  }

  /// Whether a value is of this field's kind (`null` is never, for a field present).
  /// - Parameter value: the value.
  /// - Returns: true when it fits.
  package func accepts(_ value: JSONValue) -> Bool {
    switch (kind, value) {
    case (.json, _): return true
    case (.string, .string), (.number, .number), (.boolean, .bool):
      return true
    case (.integer, .number(let number)):
      return number.isWhole
    case (.strings, .array(let items)):
      return items.allSatisfy { if case .string = $0 { return true } else { return false } }
    default: return false
    }
  }

  /// Declares a string field with bounds on its text's length.
  /// - Parameters:
  ///   - name: the member's name.
  ///   - required: whether a record must have it.
  ///   - length: how many characters its text may hold.
  package init(_ name: String, required: Bool = false, length: ClosedRange<Int>) {
    self.init(name, .string, required: required)
    self.length = length
  }

  /// Why a present value breaks the field's length rule, or nil when it keeps it (or is not a
  /// string, or the field has no rule).
  /// - Parameter value: the value.
  /// - Returns: a sentence's end: "can't be empty", "holds at most 200 characters (this one
  ///   has 201)".
  package func lengthProblem(_ value: JSONValue) -> String? {
    guard let length, case .string(let text) = value else { return nil }
    let count = text.unicodeScalars.count
    if length.lowerBound > 0, text.trimmingWhitespaceAndNewlines().isEmpty {
      return "can't be empty"
    }
    if count < length.lowerBound {
      return "holds at least \(length.lowerBound) characters (this one has \(count))"
    }
    if count > length.upperBound {
      return "holds at most \(length.upperBound) characters (this one has \(count))"
    }
    return nil
  }

  /// A value as shown in an error: at most 40 characters, control characters escaped.
  static func shown(_ text: String) -> String {
    var prefix = ""
    prefix.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(40))
    return LogText.escaped(prefix) + (text.unicodeScalars.count > 40 ? "…" : "")
  }
}
