import CourierDomain
import Foundation
import Testing

/// Integers keep every digit: a JSON number whose value is whole and fits in 64 bits is read
/// exactly, not through a `Double` (which has 53 bits of mantissa).
@Suite("JSONValue integers")
struct JSONValueTests {
  @Test("an id above 2^53 round-trips through parse and encode with every digit")
  func aboveTwoToTheFiftyThree() throws {
    let text = #"{"id":9007199254740993,"title":"T"}"#
    let value = try JSONValue(parsing: text)
    #expect(value["id"] == .integer(9_007_199_254_740_993))
    // A Double cannot hold it: the nearest one is 2^53, a different id.
    #expect(value["id"] != .number(9_007_199_254_740_992))
    #expect(value.jsonText == text)
    #expect(try JSONValue(parsing: value.jsonText) == value)
    // JSONDecoder and JSONEncoder (Codable) agree.
    let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    #expect(decoded["id"] == .integer(9_007_199_254_740_993))
    #expect(
      String(decoding: try JSONEncoder().encode(decoded["id"]), as: UTF8.self) == "9007199254740993"
    )
  }

  @Test(
    "whole values within 64 bits are integers however spelled; fractions and larger are numbers",
    arguments: [
      ("0", JSONValue.integer(0)), ("-0", .integer(0)), ("42", .integer(42)),
      ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
      ("9223372036854775808", .number(9_223_372_036_854_775_808)), ("1.5", .number(1.5)),
      ("-2.25e2", .integer(-225)), ("1e3", .integer(1000)), ("1.0", .integer(1)),
      ("1.2345678901234567e+18", .integer(1_234_567_890_123_456_700)), ("1e-3", .number(0.001)),
      ("1e400", nil),
    ])
  func kinds(_ row: (String, JSONValue?)) throws {
    guard let expected = row.1 else {
      #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: row.0) }
      return
    }
    let parsed = try JSONValue(parsing: row.0)
    #expect(parsed == expected)
    switch (parsed, expected) {
    case (.integer, .integer), (.number, .number): break
    default: Issue.record("\(row.0) parsed as \(parsed), expected the case of \(expected)")
    }
  }

  @Test("Codable agrees with the parser on what JSONEncoder writes, beyond 2^53 too")
  func codableBeyondTwoToTheFiftyThree() throws {
    for value in [
      JSONValue.integer(1_234_567_890_123_456_789), .integer(-9_007_199_254_740_993),
      .number(1.2345678901234568e18), .number(-9.2233720368547758e18), .number(0.1),
    ] {
      let data = try JSONEncoder().encode(value)
      let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
      let parsed = try JSONValue(parsing: data)
      #expect(decoded == value, "\(String(decoding: data, as: UTF8.self))")
      #expect(parsed == value, "\(String(decoding: data, as: UTF8.self))")
    }
  }

  @Test("an exponent as large as Int itself is a number, not a trap (found by fuzzing)")
  func hugeExponent() throws {
    let value = try JSONValue(parsing: "[7963e-9223372036854775808, 1e-9223372036854775808]")
    guard case .array(let items) = value, items.count == 2 else {
      Issue.record("not an array of two: \(value)")
      return
    }
    for item in items {
      guard case .number = item else {
        Issue.record("\(item) is not a .number")
        continue
      }
    }
  }

  @Test("numbers compare and hash by value across the two cases")
  func equalityByValue() {
    #expect(JSONValue.integer(1000) == .number(1000))
    #expect(JSONValue.number(1000) == .integer(1000))
    #expect(JSONValue.integer(1) != .number(1.5))
    #expect(JSONValue.integer(1) != .string("1"))
    #expect(Set([JSONValue.integer(1000), .number(1000), .number(1e3)]).count == 1)
    #expect(Set([JSONValue.integer(3), .number(3.5)]).count == 2)
    // "1e3" (a number) equals what it encodes to, "1000" (an integer).
    #expect((try? JSONValue(parsing: "1e3")) == (try? JSONValue(parsing: "1000")))
  }

  @Test("intValue and doubleValue read either case")
  func accessors() {
    #expect(JSONValue.integer(7).intValue == 7)
    #expect(JSONValue.number(7).intValue == 7)
    #expect(JSONValue.number(7.5).intValue == nil)
    #expect(JSONValue.integer(7).doubleValue == 7)
    #expect(JSONValue.number(7.5).doubleValue == 7.5)
    #expect(JSONValue.string("7").intValue == nil && JSONValue.string("7").doubleValue == nil)
  }
}
