import CourierDomain
import CourierSystem
import Foundation
import Testing

/// Numbers keep the text that spells them, and nesting up to the limit round-trips exactly
/// (decision 2428): parse → `jsonText` (what the store writes and the replay sends) gives the
/// input back, digit for digit.
@Suite("JSONValue numbers and nesting")
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

  /// Numbers no Int64 or Double holds as written: each is kept as its text.
  static let exactNumbers = [
    "18446744073709551617", "-18446744073709551617", "123456789012345678901234567890123",
    "-1e400", "1e400", "1E+400", "-1.5e-400", "0.1", "1e-7", "-0", "-0.0", "1.50", "1.5e3",
    "0", "9223372036854775808", "-9223372036854775809", "0.30000000000000000001", "6.02e+23",
    "2.5E-3", "100000000000000000000000000000000000000000000001",
  ]

  @Test("a number keeps its text through parse → jsonText → parse", arguments: exactNumbers)
  func exactText(_ number: String) throws {
    for text in ["[\(number)]", #"{"big":\#(number),"n":1}"#, number] {
      let value = try JSONValue(parsing: text)
      #expect(value.jsonText == text)
      #expect(try JSONValue(parsing: value.jsonText) == value)
    }
    #expect(JSONNumber(number)?.description == number)
  }

  @Test(
    "int64Value reads a whole value within 64 bits however spelled; doubleValue the nearest",
    arguments: [
      ("0", Int64(0), 0.0), ("-0", 0, -0.0), ("42", 42, 42), ("1.0", 1, 1), ("1.5e3", 1500, 1500),
      ("-2.25e2", -225, -225), ("9223372036854775807", .max, 0x1p63),
      ("-9223372036854775808", .min, -9_223_372_036_854_775_808),
      ("9223372036854775808", nil, 9_223_372_036_854_775_808), ("1.5", nil, 1.5),
      ("1e-3", nil, 0.001), ("18446744073709551617", nil, 18_446_744_073_709_551_616),
      ("1e400", nil, .infinity), ("-1e400", nil, -.infinity),
    ] as [(String, Int64?, Double)])
  func readings(_ row: (String, Int64?, Double)) throws {
    let number = try #require(JSONNumber(row.0))
    #expect(number.int64Value == row.1, "\(row.0)")
    #expect(number.doubleValue == row.2, "\(row.0)")
  }

  @Test("numbers compare and hash by value, with every digit")
  func equalityByValue() throws {
    func parsed(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }
    #expect(try parsed("1000") == parsed("1e3"))
    #expect(try parsed("1.50") == parsed("1.5"))
    #expect(try parsed("0.15e1") == parsed("15e-1"))
    #expect(try parsed("-0") == parsed("0"))
    #expect(try parsed("0.000e7") == parsed("0"))
    #expect(try parsed("1.5") != parsed("-1.5"))
    // The same Double, different numbers: a Double would call them equal.
    #expect(try parsed("18446744073709551617") != parsed("18446744073709551616"))
    #expect(try parsed("0.1") != parsed("0.10000000000000001"))
    #expect(try parsed("1e400") != parsed("1e401"))
    #expect(JSONValue.integer(1) != .string("1"))
    let set = try Set(["1000", "1e3", "1000.0", "10e2", "1001"].map(parsed))
    #expect(set.count == 2)
    // An exponent beyond 15 digits is compared as written.
    #expect(try parsed("1e1000000000000000000") == parsed("1e1000000000000000000"))
    #expect(try parsed("1e1000000000000000000") != parsed("1e1000000000000000001"))
  }

  @Test("JSONNumber takes JSON's spelling only; a Double is spelled as it reads back")
  func spellings() {
    for bad in ["+1", ".5", "1.", "01", "NaN", "Infinity", " 1", "1 ", "", "-", "1e", "0x10"] {
      #expect(JSONNumber(bad) == nil, "\(bad)")
    }
    let doubles: [Double] = [3.0, 0.1, 1e-7, 1.8446744073709552e19]
    #expect(
      doubles.map { JSONNumber($0)?.description } == [
        "3", "0.1", "1e-07", "1.8446744073709552e+19",
      ])
    #expect(JSONNumber(.nan) == nil && JSONNumber(.infinity) == nil)
    #expect(JSONValue.double(-.infinity) == .null)
    let literal: JSONNumber = 2.5
    #expect(literal.description == "2.5")
  }

  @Test("an exponent as large as Int itself is a number, not a trap (found by fuzzing)")
  func hugeExponent() throws {
    let text = "[7963e-9223372036854775808,1e-9223372036854775808]"
    let value = try JSONValue(parsing: text)
    #expect(value.jsonText == text)
    guard case .array(let items) = value, items.count == 2 else {
      Issue.record("not an array of two: \(value)")
      return
    }
    #expect(items.allSatisfy { $0.doubleValue == 0 })
  }

  @Test("intValue and doubleValue read numbers only")
  func accessors() {
    #expect(JSONValue.integer(7).intValue == 7)
    #expect(JSONValue.number(7.0).intValue == 7)
    #expect(JSONValue.number(7.5).intValue == nil)
    #expect(JSONValue.integer(7).doubleValue == 7)
    #expect(JSONValue.number(7.5).doubleValue == 7.5)
    #expect(JSONValue.string("7").intValue == nil && JSONValue.string("7").doubleValue == nil)
  }

  // MARK: - Nesting

  static func nestedArrays(_ levels: Int, around inner: String) -> String {
    String(repeating: "[", count: levels) + inner + String(repeating: "]", count: levels)
  }

  static func nestedObjects(_ levels: Int, around inner: String) -> String {
    String(repeating: #"{"a":"#, count: levels) + inner + String(repeating: "}", count: levels)
  }

  @Test("nesting at the limit round-trips exactly, and compares and hashes without recursion")
  func atTheLimit() throws {
    let limit = JSONValue.maximumDepth
    for text in [
      Self.nestedArrays(limit, around: "18446744073709551617"),
      Self.nestedObjects(limit, around: "-1e400"),
      Self.nestedArrays(limit / 2, around: Self.nestedObjects(limit / 2, around: "0.1")),
    ] {
      let value = try JSONValue(parsing: text)
      #expect(value.depth == limit)
      #expect(value.jsonText == text)
      let again = try JSONValue(parsing: Data(value.jsonText.utf8))
      #expect(again == value)
      #expect(again.hashValue == value.hashValue)
      #expect(Set([value, again]).count == 1)
    }
    // The same shape with another number at the bottom is another value.
    let one = try JSONValue(parsing: Self.nestedArrays(limit, around: "1"))
    let two = try JSONValue(parsing: Self.nestedArrays(limit, around: "2"))
    #expect(one != two)
  }

  @Test("one level past the limit is refused, naming where; 100,000 levels too, without a crash")
  func pastTheLimit() throws {
    let limit = JSONValue.maximumDepth
    let record = #"[{"id":"r1","meta":\#(Self.nestedArrays(limit - 1, around: "1"))}]"#
    do {
      _ = try JSONValue(parsing: record)
      Issue.record("a list nested \(limit + 1) levels deep was read")
    } catch {
      #expect(error.tooDeepAt?.count == limit)
      #expect(error.tooDeepAt?.prefix(2) == [.element(0), .member("meta")])
      #expect(error.description.contains("nested deeper than \(limit) levels"), "\(error)")
      #expect(error.description.contains("[0].meta[0]"), "\(error)")
    }
    for hostile in [
      Self.nestedArrays(100_000, around: "1"), String(repeating: #"[{"a":"#, count: 100_000),
      Self.nestedObjects(100_000, around: "null"),
    ] {
      #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: hostile) }
    }
  }

  @Test("a list with one record too deep reads the others, that record's value as null, listed")
  func skippingTooDeep() throws {
    let deep = Self.nestedArrays(100_000, around: "1")
    let text = #"[{"id":"a","n":18446744073709551617},{"id":"b","meta":\#(deep)}]"#
    let (value, skipped) = try JSONValue.parsingSkippingTooDeep(Data(text.utf8))
    #expect(skipped.count == 1)
    #expect(skipped.first?.prefix(2) == [.element(1), .member("meta")])
    guard case .array(let records) = value, records.count == 2 else {
      Issue.record("not a list of two: \(value.jsonText.prefix(200))")
      return
    }
    #expect(records[0].jsonText == #"{"id":"a","n":18446744073709551617}"#)
    #expect(records[1]["id"] == .string("b"))
    // Skipped, but checked: text that is not JSON inside the deep value is still refused.
    let broken = #"[{"id":"b","meta":\#(Self.nestedArrays(100_000, around: "1,"))}]"#
    #expect(throws: JSONValue.ParseError.self) {
      try JSONValue.parsingSkippingTooDeep(Data(broken.utf8))
    }
  }

  @Test("Codable stops at 512 levels with an error; coded as text it keeps every digit")
  func codable() throws {
    let deep = try JSONValue(parsing: Self.nestedArrays(1_000, around: "1"))
    #expect(throws: EncodingError.self) { try JSONEncoder().encode(deep) }
    let exact = try JSONValue(
      parsing: #"{"big":18446744073709551617,"deep":\#(Self.nestedArrays(2_000, around: "0.1"))}"#)
    let encoder = JSONEncoder()
    encoder.userInfo[JSONValue.codedAsText] = true
    let decoder = JSONDecoder()
    decoder.userInfo[JSONValue.codedAsText] = true
    let data = try encoder.encode(["payload": exact])
    let back = try decoder.decode([String: JSONValue].self, from: data)
    #expect(back["payload"]?.jsonText == exact.jsonText)
    for value in [
      JSONValue.integer(1_234_567_890_123_456_789), .integer(-9_007_199_254_740_993),
      .double(1.2345678901234568e18), .double(-9.2233720368547758e18), .double(0.1),
    ] {
      let data = try JSONEncoder().encode(value)
      #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
      #expect(try JSONValue(parsing: data) == value)
    }
  }
}
