import CourierDomain
import CourierTestSupport
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
      ("  Sun, 06 Nov 1994 08:50:07 GMT  ", Duration.seconds(30)),
    ])
  func parses(_ value: String, _ expected: Duration) {
    #expect(RetryAfter.parse(value, now: Self.now) == expected)
  }

  @Test("rejects garbage", arguments: ["", "soon", "-5", "1.5", "99999999999999999999"])
  func rejects(_ value: String) {
    #expect(RetryAfter.parse(value, now: Self.now) == nil)
  }

  @Test(
    "an HTTP-date is one of the three forms, naming a real time",
    arguments: [
      ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
      ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),
      ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
      ("Sun Nov 16 08:49:37 1994", 784_975_777.0),
      ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
      ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600.0),
      ("Wed, 31 Dec 2098 23:59:60 GMT", 4_070_908_800.0),  // a leap second: the next minute
      ("sun, 06 nov 1994 08:49:37 GMT", 784_111_777.0),  // names in any case
      ("Mon, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),  // the day name is not checked
    ] as [(String, Double)])
  func httpDates(_ text: String, _ seconds: Double) {
    #expect(RetryAfter.httpDate(text) == Date(timeIntervalSince1970: seconds))
  }

  @Test(
    "anything else is no date",
    arguments: [
      "Sun, 31 Feb 1994 08:49:37 GMT",  // no such day
      "Sun, 29 Feb 1900 08:49:37 GMT",  // 1900 is not a leap year
      "Sun, 06 Nov 1994 24:00:00 GMT",
      "Sun, 06 Nov 1994 08:60:00 GMT",
      "Sun, 06 Nov 1994 08:49:61 GMT",
      "Sun, 06 Nov 1994 08:49:37 UTC",
      "Sun, 06 Nov 1994 08:49:37 GMT+1",
      "Sun, 6 Nov 1994 08:49:37 GMT",
      "Sun, 06 November 1994 08:49:37 GMT",
      "Sunday, 06 Nov 1994 08:49:37 GMT",  // a long day name in the short form
      "Sun, 06-Nov-94 08:49:37 GMT",  // a short day name in the RFC 850 form
      "Sun Nov 6 08:49:37 1994",
      "Sun,06 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 08:49:37",
      "Sun, 06 Nov 1994",
      "Funday, 06-Nov-94 08:49:37 GMT",
      "Sun, 00 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 08:49:37 GMT\u{0}",
      "Sün, 06 Nov 1994 08:49:37 GMT",
      ",",
    ])
  func notDates(_ text: String) {
    #expect(RetryAfter.httpDate(text) == nil)
  }

  @Test(
    "a two-digit year more than 50 years ahead is the century before (RFC 9110 §5.6.7)",
    arguments: [("26", 2026), ("76", 2076), ("77", 1977), ("94", 1994), ("00", 2000)])
  func twoDigitYears(_ digits: String, _ year: Int) throws {
    let now = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28
    let wait = try #require(
      RetryAfter.parse("Friday, 01-Jan-\(digits) 00:00:00 GMT", now: now))
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "GMT")!
    let expected = try #require(
      calendar.date(from: DateComponents(year: year, month: 1, day: 1)))
    let seconds = expected.timeIntervalSince(now)
    #expect(wait == (seconds <= 0 ? .zero : .seconds(Int64(seconds))))
  }

  @Test("agrees with DateFormatter on 3,000 random times in each of the three forms")
  func agreesWithDateFormatter() throws {
    var random = SplitMix64(testSeed: 0x4E7_4A1_AF7E)
    let forms = [
      "EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'",
      "EEE MMM d HH:mm:ss yyyy",
    ]
    for form in forms {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "GMT")
      formatter.dateFormat = form
      for _ in 0..<1_000 {
        // 1970 to 2068: where the two-digit year's default century holds.
        let seconds = Double(Int.random(in: 0..<3_124_137_600, using: &random))
        let date = Date(timeIntervalSince1970: seconds)
        var text = formatter.string(from: date)
        if form.hasPrefix("EEE MMM d ") {
          // asctime pads a one-digit day with a space: "Nov  6".
          let parts = text.split(separator: " ", omittingEmptySubsequences: false)
          if parts[2].count == 1 {
            text = "\(parts[0]) \(parts[1])  \(parts[2...].joined(separator: " "))"
          }
        }
        #expect(RetryAfter.httpDate(text) == date, "\(random.seedDescription): \(text)")
      }
    }
  }
}
