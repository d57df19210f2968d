import CourierDomain
import Foundation
import Testing

@Suite("RecordField")
struct RecordFieldTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var kind: RecordField.Kind
    var text: String
    var expected: JSONValue?
    var testDescription: String {
      "\(kind.rawValue) “\(text)” → \(expected.map { "\($0)" } ?? "refused")"
    }
  }

  static let rows: [Row] = [
    Row(kind: .string, text: " as is, commas, too ", expected: .string(" as is, commas, too ")),
    Row(kind: .string, text: "", expected: .string("")),
    Row(kind: .integer, text: " 42 ", expected: .integer(42)),
    Row(kind: .integer, text: "-7", expected: .integer(-7)),
    Row(kind: .integer, text: "4.5", expected: nil),
    Row(kind: .integer, text: "99999999999999999999", expected: .literal("99999999999999999999")),
    Row(kind: .integer, text: "1e3", expected: nil),
    Row(kind: .number, text: "0.10", expected: .literal("0.10")),
    Row(kind: .number, text: "-1e400", expected: .literal("-1e400")),
    Row(kind: .number, text: "4.5", expected: .number(4.5)),
    Row(kind: .number, text: "3", expected: .integer(3)),
    Row(kind: .number, text: "nan", expected: nil),
    Row(kind: .number, text: "inf", expected: nil),
    Row(kind: .boolean, text: "TRUE", expected: .bool(true)),
    Row(kind: .boolean, text: "no", expected: .bool(false)),
    Row(kind: .boolean, text: "maybe", expected: nil),
    Row(
      kind: .strings, text: "a, b ,c", expected: .array([.string("a"), .string("b"), .string("c")])),
    Row(kind: .strings, text: "", expected: .array([])),
    Row(kind: .strings, text: "one", expected: .array([.string("one")])),
    Row(
      kind: .json, text: #"{"a":[1,true]}"#,
      expected: .object(["a": .array([.integer(1), .bool(true)])])),
    Row(kind: .json, text: "{nope", expected: nil),
  ]

  @Test("a command line's text read as the field's kind", arguments: rows)
  func parsing(_ row: Row) throws {
    let field = RecordField("f", row.kind)
    if let expected = row.expected {
      #expect(try field.value(parsing: row.text) == expected)
    } else {
      let error = #expect(throws: CourierError.self) { try field.value(parsing: row.text) }
      #expect(error?.kind == .invalidInput && error?.field == "f")
      #expect(error?.userMessage.contains("“f”") == true)
    }
  }

  @Test("which JSON a field accepts")
  func accepts() {
    #expect(RecordField("f", .string).accepts(.string("x")))
    #expect(!RecordField("f", .string).accepts(.integer(1)))
    #expect(RecordField("f", .number).accepts(.integer(1)))
    #expect(!RecordField("f", .integer).accepts(.number(1.5)))
    #expect(RecordField("f", .strings).accepts(.array([.string("a")])))
    #expect(!RecordField("f", .strings).accepts(.array([.integer(1)])))
    #expect(RecordField("f", .json).accepts(.null))
    #expect(!RecordField("f", .boolean).accepts(.null))
  }
}

extension JSONValue {
  /// A number as written (a test's own text, so a typing mistake shows as a string).
  static func literal(_ text: String) -> JSONValue {
    JSONNumber(text).map(JSONValue.number) ?? .string("not a JSON number: \(text)")
  }
}
