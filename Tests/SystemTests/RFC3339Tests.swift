import CourierSystem
import Foundation
import Testing

/// RFC 3339 timestamps: the byte reader of the backend's form agrees with Foundation's parser,
/// and anything else still goes to Foundation's.
@Suite("RFC3339")
struct RFC3339Tests {
  static let foundation: @Sendable (String) -> Date? = { text in
    (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
      ?? (try? Date.ISO8601FormatStyle().parse(text))
  }

  @Test(
    "the backend's form: the same instant as Foundation's parser",
    arguments: [
      "2026-11-30T10:15:00.123Z", "2026-11-30T10:15:00Z", "1970-01-01T00:00:00Z",
      "2000-02-29T23:59:59.999Z", "1999-12-31T23:59:59.5Z", "2024-02-29T12:00:00.000001Z",
      "2100-03-01T00:00:00Z", "1900-01-01T00:00:00.000Z", "2026-01-01T00:00:00.100Z",
    ])
  func agrees(_ text: String) throws {
    let expected = try #require(Self.foundation(text))
    let date = try #require(RFC3339.date(from: text))
    #expect(abs(date.timeIntervalSince1970 - expected.timeIntervalSince1970) < 0.000_01)
  }

  @Test(
    "not the backend's form: Foundation decides (an offset, or nothing valid)",
    arguments: [
      "2026-11-30T10:15:00+02:00", "2026-02-30T10:15:00Z", "2026-13-01T00:00:00Z",
      "2026-11-30 10:15:00Z", "2026-11-30T24:00:00Z", "2026-11-30T10:15:00.Z", "yesterday", "",
      "2026-11-30T10:15:00.1234567890Z", "2023-02-29T00:00:00Z",
    ])
  func fallsBack(_ text: String) {
    #expect(RFC3339.date(from: text) == Self.foundation(text))
  }

  @Test("milliseconds: exactly the Double Foundation's parser gives, for each of the 1,000")
  func milliseconds() throws {
    for milliseconds in 0..<1000 {
      let text = "2026-11-30T10:15:00." + String(1000 + milliseconds).dropFirst() + "Z"
      #expect(RFC3339.date(from: text) == Self.foundation(text), "\(text)")
    }
  }

  @Test("a formatted date reads back")
  func roundTrip() throws {
    let date = Date(timeIntervalSince1970: 1_764_497_700.123)
    let read = try #require(RFC3339.date(from: RFC3339.string(from: date)))
    #expect(abs(read.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
  }
}
