import Foundation

/// RFC 3339 timestamps as the backend writes them (`2026-11-30T10:15:00.123Z`).
public enum RFC3339 {
  /// Parses a timestamp, with or without fractional seconds.
  /// - Parameter text: the timestamp.
  /// - Returns: the date, or nil when it is not RFC 3339.
  public static func date(from text: String) -> Date? {
    if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
      return date
    }
    return try? Date.ISO8601FormatStyle().parse(text)
  }

  /// Formats a date in UTC with milliseconds.
  /// - Parameter date: the date.
  /// - Returns: the timestamp.
  public static func string(from date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
