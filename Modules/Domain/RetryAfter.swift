import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
package enum RetryAfter {
  /// Parses the header.
  /// - Parameters:
  ///   - value: the header's value.
  ///   - now: the current time, for a date.
  /// - Returns: the wait (zero for a date in the past), or nil when absent or unreadable.
  package static func parse(_ value: String?, now: Date) -> Duration? {
    guard let raw = value?.trimmingSpacesAndTabs(), !raw.isEmpty else { return nil }
    if raw.allSatisfy(\.isASCII), raw.allSatisfy(\.isNumber) {
      guard raw.count <= 10, let seconds = Int64(raw) else { return nil }
      return .seconds(seconds)
    }
    guard let date = HTTPDate.parse(raw, now: now) else { return nil }
    let interval = date.timeIntervalSince(now)
    return interval <= 0 ? .zero : .milliseconds(Int64((interval * 1000).rounded(.up)))
  }

  /// Parses an HTTP-date in any of the three forms RFC 9110 §5.6.7 requires a recipient to
  /// accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
  /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
  ///
  /// Read byte by byte, without `DateFormatter` (no locale, no ICU, nothing allocated per
  /// call). A two-digit year is 19yy from 69 on and 20yy below; `parse(_:now:)` applies the
  /// RFC's rule instead (a year more than 50 years ahead of now is the century before).
  /// - Parameter text: the date text.
  /// - Returns: the date, or nil when it is not one of the three forms or names no real time.
  package static func httpDate(_ text: String) -> Date? {
    HTTPDate.parse(text, now: nil)
  }
}

/// The three HTTP-date forms, parsed from their bytes.
enum HTTPDate {
  private static let months = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ]
  private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
  private static let longDays = [
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
  ]

  /// The date, or nil. `now` settles a two-digit year (RFC 9110: more than 50 years in the
  /// future means the most recent past year with those digits); without it, 69–99 are 19yy.
  static func parse(_ text: String, now: Date?) -> Date? {
    var bytes = Array(text.utf8)
    // Trailing and leading blanks are not part of the value.
    while bytes.last == 0x20 || bytes.last == 0x09 { bytes.removeLast() }
    var reader = Reader(bytes: bytes)
    reader.skipBlanks()
    guard let dayName = reader.letters() else { return nil }
    if reader.take(0x2C) {  // ","
      guard reader.take(0x20) else { return nil }
      if shortDays.contains(dayName) {
        return imfFixdate(&reader)
      }
      if longDays.contains(dayName) {
        return rfc850(&reader, now: now)
      }
      return nil
    }
    guard shortDays.contains(dayName), reader.take(0x20) else { return nil }
    return asctime(&reader)
  }

  /// `06 Nov 1994 08:49:37 GMT`, after the day name and ", ".
  private static func imfFixdate(_ reader: inout Reader) -> Date? {
    guard let day = reader.digits(2), reader.take(0x20),
      let month = month(&reader), reader.take(0x20),
      let year = reader.digits(4), reader.take(0x20),
      let time = timeOfDay(&reader), reader.take(0x20), reader.gmt(), reader.atEnd
    else { return nil }
    return date(year: year, month: month, day: day, time: time)
  }

  /// `06-Nov-94 08:49:37 GMT`, after the day name and ", ".
  private static func rfc850(_ reader: inout Reader, now: Date?) -> Date? {
    guard let day = reader.digits(2), reader.take(0x2D),
      let month = month(&reader), reader.take(0x2D),
      let twoDigits = reader.digits(2), reader.take(0x20),
      let time = timeOfDay(&reader), reader.take(0x20), reader.gmt(), reader.atEnd
    else { return nil }
    var year: Int
    if let now {
      let current = civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
      year = (current / 100) * 100 + twoDigits
      if year > current + 50 { year -= 100 }
    } else {
      year = twoDigits >= 69 ? 1900 + twoDigits : 2000 + twoDigits
    }
    return date(year: year, month: month, day: day, time: time)
  }

  /// `Nov  6 08:49:37 1994`, after the day name and " ".
  private static func asctime(_ reader: inout Reader) -> Date? {
    guard let month = month(&reader), reader.take(0x20) else { return nil }
    let day: Int
    if reader.take(0x20) {
      guard let digit = reader.digits(1) else { return nil }
      day = digit
    } else {
      guard let digits = reader.digits(2) else { return nil }
      day = digits
    }
    guard reader.take(0x20), let time = timeOfDay(&reader), reader.take(0x20),
      let year = reader.digits(4), reader.atEnd
    else { return nil }
    return date(year: year, month: month, day: day, time: time)
  }

  private static func month(_ reader: inout Reader) -> Int? {
    guard let name = reader.letters(), let index = months.firstIndex(of: name) else { return nil }
    return index + 1
  }

  private static func timeOfDay(_ reader: inout Reader) -> (Int, Int, Int)? {
    guard let hour = reader.digits(2), reader.take(0x3A),
      let minute = reader.digits(2), reader.take(0x3A),
      let second = reader.digits(2)
    else { return nil }
    // 60 is a leap second, which RFC 9110 allows.
    guard hour < 24, minute < 60, second <= 60 else { return nil }
    return (hour, minute, second)
  }

  private static func date(year: Int, month: Int, day: Int, time: (Int, Int, Int)) -> Date? {
    guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    let seconds = days * 86_400 + time.0 * 3_600 + time.1 * 60 + time.2
    return Date(timeIntervalSince1970: TimeInterval(seconds))
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2:
      let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
      return leap ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The date of a day count since 1970-01-01 (`civil_from_days`).
  static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// A cursor over the bytes.
  private struct Reader {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func skipBlanks() {
      while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
      guard index < bytes.count, bytes[index] == byte else { return false }
      index += 1
      return true
    }

    /// ASCII letters, lowercased; nil when there is none (or more than a day name holds).
    mutating func letters() -> String? {
      let start = index
      while index < bytes.count, index - start < 9 {
        let byte = bytes[index] | 0x20
        guard byte >= 0x61, byte <= 0x7A else { break }
        index += 1
      }
      guard index > start else { return nil }
      return String(decoding: bytes[start..<index].map { $0 | 0x20 }, as: UTF8.self)
    }

    /// Exactly `count` ASCII digits.
    mutating func digits(_ count: Int) -> Int? {
      guard bytes.count - index >= count else { return nil }
      var value = 0
      for offset in 0..<count {
        let byte = bytes[index + offset]
        guard byte >= 0x30, byte <= 0x39 else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      index += count
      return value
    }

    /// `GMT`: the only zone an HTTP-date has (case-sensitive in the grammar; read as it is).
    mutating func gmt() -> Bool {
      take(0x47) && take(0x4D) && take(0x54)
    }
  }
}
