import CourierDomain
import CourierSystem

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

/// Where a command writes, and what kind of terminal it writes to.
package protocol CommandOutput: Sendable {
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

/// JSON text for one object, keys sorted by their UTF-8 bytes, slashes not escaped, on one line:
/// `JSONValue.jsonText`, not `JSONSerialization`, which links corelibs Foundation into the
/// binary. For the CLI's own keys (lower-case letters and `_`) the bytes are the ones
/// `JSONSerialization` wrote; it sorted other keys (a record's fields) case-insensitively and
/// numerically, and wrote `\b` and `\f` where this writes `\u0008` and `\u000c`.
enum JSONLine {
  /// The line. A scalar a terminal acts on that JSON lets pass raw (DEL, a C1 control, U+2028,
  /// a bidi override: `LogText.needsEscape`) is written as a `\uXXXX` escape: the same JSON
  /// value, exact for a program, inert on a terminal (decision 2420). Such a scalar can only stand
  /// inside a string: JSON's own syntax is ASCII.
  static func encode(_ object: [String: JSONValue]) -> String {
    let text = JSONValue.object(object).jsonText
    guard text.unicodeScalars.contains(where: LogText.needsEscape) else { return text }
    var escaped = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard LogText.needsEscape(scalar) else {
        escaped.append(scalar)
        continue
      }
      escaped.append(
        contentsOf: ("\\u" + scalar.value.upperHex(digits: 4).lowercased()).unicodeScalars)
    }
    return String(escaped)
  }

  /// A reply's body as a member of a line: its JSON when it is JSON (any value at the top, as
  /// `JSONSerialization`'s `.fragmentsAllowed` read it), else its text.
  static func body(_ bytes: Data) -> JSONValue {
    (try? JSONValue(parsing: bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
  }
}

extension JSONValue {
  /// An integer of any width (`Int`, `Int64`, a pid), as its digits.
  static func int(_ value: some BinaryInteger) -> JSONValue { .integer(value) }

  /// Strings as a JSON array.
  static func strings(_ values: [String]) -> JSONValue {
    .array(values.map(JSONValue.string))
  }
}
