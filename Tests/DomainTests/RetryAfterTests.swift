import CourierDomain
import Foundation
import Testing

@Suite("RetryAfter")
struct RetryAfterTests {
  static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

  @Test(
    "parses seconds and the three HTTP-date forms",
    arguments: [
      ("120", Duration.seconds(120)),
      ("0", Duration.zero),
      ("Sun, 06 Nov 1994 08:50:07 GMT", Duration.seconds(30)),
      ("Sunday, 06-Nov-94 08:50:07 GMT", Duration.seconds(30)),
      ("Sun Nov  6 08:50:07 1994", Duration.seconds(30)),
      ("Sun, 06 Nov 1994 08:00:00 GMT", Duration.zero),
    ])
  func parses(_ value: String, _ expected: Duration) {
    #expect(RetryAfter.parse(value, now: Self.now) == expected)
  }

  @Test("rejects garbage", arguments: ["", "soon", "-5", "1.5", "99999999999999999999"])
  func rejects(_ value: String) {
    #expect(RetryAfter.parse(value, now: Self.now) == nil)
  }
}
