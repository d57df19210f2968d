import CourierDomain
import CourierTestSupport
import Foundation
import Testing

/// `JSONValue(parsing:)` against Foundation's `JSONDecoder`, which it replaces on hot paths.
@Suite("JSONValue parser")
struct JSONValueParserTests {
  static let valid: [String] = [
    "null", "true", "false", "0", "-0", "12", "-3.25", "1e3", "1E-2", "6.02e+23", "\"\"",
    "\"plain\"", #""esc \" \\ \/ \b \f \n \r \t""#, #""\u00e9\u4e2d\ud83d\ude00""#,
    "\"raw UTF-8 é 中 😀\"", "[]", "{}", " [1, [2, [3]], {\"a\": null}] ",
    #"{"id":"r1","title":"T","version":3,"tags":["a","b"],"n":-1.5e-7,"ok":true}"#,
    "\t\r\n{ \"k\" : [ ] , \"k2\" : { } }\n", #"{"dup":1,"dup":2}"#,
    "123456789012345678", "1.7976931348623157e308", "9007199254740993", "-9223372036854775808",
  ]

  @Test("valid JSON parses to what JSONDecoder gives", arguments: valid)
  func matchesFoundation(_ text: String) throws {
    let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    #expect(try JSONValue(parsing: Data(text.utf8)) == expected)
    #expect(try JSONValue(parsing: text) == expected)
  }

  static let invalid: [(String, Int)] = [
    ("", 0), ("   ", 3), ("nul", 3), ("tru", 3), ("[1,]", 3), ("[1 2]", 3), ("{\"a\" 1}", 5),
    ("{\"a\":1,}", 7), ("{a:1}", 1), ("01", 1), ("-", 1), ("1.", 2), ("1e", 2), (".5", 0),
    ("+1", 0), ("\"open", 5), ("\"tab\tinside\"", 4), (#""\x""#, 2), (#""\u12""#, 3),
    (#""\ud800""#, 7), (#""\ud800\u0041""#, 13), (#""\udc00""#, 7), ("[1] x", 4),
    ("[", 1), ("{", 1), ("{\"a\":", 5), ("NaN", 0),
  ]

  @Test("invalid JSON is refused, naming the byte where reading stopped", arguments: invalid)
  func refuses(_ row: (String, Int)) {
    #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: row.0) }
    do {
      _ = try JSONValue(parsing: row.0)
    } catch {
      #expect(error.offset == row.1, "\(error)")
    }
  }

  @Test("bytes that are not UTF-8 inside a string are refused")
  func notUTF8() {
    #expect(throws: JSONValue.ParseError.self) {
      try JSONValue(parsing: Data([0x22, 0xC3, 0x28, 0x22]))
    }
    #expect(throws: JSONValue.ParseError.self) {
      try JSONValue(parsing: Data([0x22, 0x61, 0x5C, 0x6E, 0xFF, 0x22]))
    }
  }

  @Test("nesting stops at the limit, and deeper input fails instead of crashing")
  func depth() throws {
    let limit = JSONValue.maximumDepth
    let ok = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
    #expect(throws: Never.self) { try JSONValue(parsing: ok) }
    let deep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
    #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: deep) }
    let hostile = String(repeating: "[{\"a\":", count: 50_000)
    #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: hostile) }
  }

  static func randomString(_ random: inout SplitMix64) -> String {
    let pool: [Character] = [
      "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "中", "😀",
      "\u{7F}", "\u{2028}",
    ]
    return String((0..<random.below(12)).map { _ in pool[random.below(pool.count)] })
  }

  static func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
    switch random.below(depth > 4 ? 5 : 7) {
    case 0: return .null
    case 1: return .bool(random.below(2) == 0)
    case 2:
      let raw = Double(bitPattern: random.next())
      return .double(raw.isFinite ? raw : Double(random.below(1_000_000)) - 500_000)
    case 3: return .string(randomString(&random))
    case 4: return .integer(Int64(bitPattern: random.next()))
    case 5: return .array((0..<random.below(5)).map { _ in randomValue(&random, depth: depth + 1) })
    default:
      var members: [String: JSONValue] = [:]
      for _ in 0..<random.below(5) {
        members[randomString(&random)] = randomValue(&random, depth: depth + 1)
      }
      return .object(members)
    }
  }

  @Test("2,000 random values survive JSONEncoder → parse, and agree with JSONDecoder")
  func roundTrip() throws {
    var random = SplitMix64(testSeed: 20_261_130)
    let encoder = JSONEncoder()
    for _ in 0..<2_000 {
      let value = Self.randomValue(&random)
      let data = try encoder.encode(value)
      let parsed = try JSONValue(parsing: data)
      #expect(
        parsed == value, "\(random.seedDescription): \(String(decoding: data, as: UTF8.self))")
      #expect(
        parsed == (try JSONDecoder().decode(JSONValue.self, from: data)),
        "\(random.seedDescription)")
    }
  }

  @Test("2,000 random values survive jsonText → parse (the store's own writer)")
  func jsonTextRoundTrip() throws {
    var random = SplitMix64(testSeed: 20_261_201)
    for _ in 0..<2_000 {
      let value = Self.randomValue(&random)
      let text = value.jsonText
      let parsed = try JSONValue(parsing: text)
      #expect(parsed == value, "\(random.seedDescription): \(text)")
      #expect(
        parsed == (try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))),
        "\(random.seedDescription): \(text)")
    }
    #expect(
      JSONValue.object(["b": .integer(1), "a": .string("x\"/\n\u{01}")]).jsonText
        == #"{"a":"x\"/\n\u0001","b":1}"#)
    #expect(JSONValue.double(.infinity).jsonText == "null")
  }
}

extension SplitMix64 {
  /// A draw below `n` (this suite's and ReplayRequestTests' random JSON).
  mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
