#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Text made safe for a log line or a terminal: one line, no control characters.
package enum LogText {
  /// Escapes C0 and C1 control characters, DEL, line and paragraph separators and the bidi
  /// controls: CR as `\r`, LF as `\n`, tab as `\t`, ESC as `\e`, the others as `\xHH` or
  /// `\u{HHHH}`. Backslashes are left alone; the result is for people, not for parsing.
  /// - Parameter text: the text.
  /// - Returns: the escaped text.
  package static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      guard needsEscape(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\r": result += "\\r"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\u{1B}": result += "\\e"
      default:
        result +=
          scalar.value < 0x100
          ? "\\x" + scalar.value.upperHex(digits: 2)
          : "\\u{" + scalar.value.upperHex(digits: 4) + "}"
      }
    }
    return result
  }

  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0x061C,
      0x200E, 0x200F:
      return true
    default:
      return false
    }
  }
}
