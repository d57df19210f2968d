import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a command writes, and what kind of terminal it writes to.
public protocol CommandOutput: Sendable {
  /// Writes to standard output.
  /// - Parameter text: the text, newline included.
  func out(_ text: String)
  /// Writes to standard error.
  /// - Parameter text: the text, newline included.
  func err(_ text: String)
  /// Whether standard output is a terminal (progress bars, colour).
  var isTerminal: Bool { get }
  /// Whether colour may be used (a terminal, and `NO_COLOR` unset).
  var useColor: Bool { get }
  /// Reads standard input to its end.
  /// - Returns: the text, or nil when there is none.
  func readStandardInput() -> String?
}

/// JSON text for one object, keys sorted, on one line.
enum JSONLine {
  static func encode(_ object: [String: Any]) -> String {
    let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else {
      return "{}"
    }
    return String(decoding: data, as: UTF8.self)
  }
}
