import Foundation

/// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
  /// Parses the header.
  /// - Parameters:
  ///   - value: the header's value.
  ///   - now: the current time, for a date.
  /// - Returns: the wait (zero for a date in the past), or nil when absent or unreadable.
  public static func parse(_ value: String?, now: Date) -> Duration? {
    guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
    if raw.allSatisfy(\.isASCII), raw.allSatisfy(\.isNumber) {
      guard raw.count <= 10, let seconds = Int64(raw) else { return nil }
      return .seconds(seconds)
    }
    guard let date = httpDate(raw) else { return nil }
    let interval = date.timeIntervalSince(now)
    return interval <= 0 ? .zero : .milliseconds(Int64((interval * 1000).rounded(.up)))
  }

  /// Parses an HTTP-date in any of the three forms RFC 9110 requires a recipient to accept.
  /// - Parameter text: the date text.
  /// - Returns: the date, or nil.
  public static func httpDate(_ text: String) -> Date? {
    for format in [
      "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ] {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "GMT")
      formatter.dateFormat = format
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }
}
