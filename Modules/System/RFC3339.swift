#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// RFC 3339 timestamps as the backend writes them (`2026-11-30T10:15:00.123Z`).
package enum RFC3339 {
  /// Parses a timestamp, with or without fractional seconds.
  /// - Parameter text: the timestamp.
  /// - Returns: the date, or nil when it is not RFC 3339.
  package static func date(from text: String) -> Date? {
    // The backend's own form, read by bytes: every replayed write's reply carries one, and
    // Foundation's parser was 3 % of a replay's CPU (Docs/benchmarks/sync.md).
    if let date = utcDate(text) { return date }
    if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
      return date
    }
    return try? Date.ISO8601FormatStyle().parse(text)
  }

  /// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.fffZ` (1 to 9 digits), UTC, in range; nil
  /// for anything else (then Foundation's parser decides).
  static func utcDate(_ text: String) -> Date? {
    return text.utf8.withContiguousStorageIfAvailable { bytes -> Date? in
      func number(_ start: Int, _ count: Int) -> Int? {
        var value = 0
        for index in start..<(start + count) {
          let digit = Int(bytes[index]) - 0x30
          guard (0...9).contains(digit) else { return nil }
          value = value * 10 + digit
        }
        return value
      }
      guard bytes.count >= 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54,
        bytes[13] == 0x3A, bytes[16] == 0x3A, bytes[bytes.count - 1] == 0x5A,
        let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
        let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
        (1...12).contains(month), hour < 24, minute < 60, second < 60
      else { return nil }
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
      guard (1...lengths[month - 1]).contains(day) else { return nil }
      var fraction = 0.0
      if bytes.count > 20 {
        let digits = bytes.count - 21
        guard bytes[19] == 0x2E, (1...9).contains(digits), let value = number(20, digits)
        else { return nil }
        fraction = Double(value) / pow(10, Double(digits))
      } else if bytes[19] != 0x5A {
        return nil
      }
      // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
      let y = month <= 2 ? year - 1 : year
      let era = (y >= 0 ? y : y - 399) / 400
      let yearOfEra = y - era * 400
      let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
      let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
      let days = era * 146_097 + dayOfEra - 719_468
      let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
      // From the reference date, as Foundation's parser adds the fraction (the same Double:
      // 1970-based seconds would round the milliseconds differently).
      return Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + fraction)
    } ?? nil
  }

  /// Formats a date in UTC with milliseconds.
  /// - Parameter date: the date.
  /// - Returns: the timestamp.
  package static func string(from date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
