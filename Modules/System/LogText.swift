#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Text made safe for a log line or a terminal: Courier's one function for printing text it
/// did not write (a server's title, message or record, a file's name) where a terminal reads
/// it. Nothing in it can move the cursor, change colours, set the window title (ESC, CSI, OSC,
/// BEL), overwrite the line (CR), forge a line (LF) or turn the text around (the bidi controls,
/// U+202E among them): each is shown as a visible escape instead. `--json` output is never put
/// through it (JSON's own escaping is exact).
package enum LogText {
  /// Escapes C0 and C1 control characters, DEL, line and paragraph separators and the bidi
  /// controls: CR as `\r`, LF as `\n`, tab as `\t`, ESC as `\e`, the others as `\xHH` or
  /// `\u{HHHH}`. Backslashes are left alone; the result is for people, not for parsing (and
  /// escaping it again changes nothing).
  /// - Parameter text: the text.
  /// - Returns: the escaped text, on one line.
  package static func escaped(_ text: String) -> String {
    escaped(text, keepingLineBreaks: false)
  }

  /// ``escaped(_:)``, keeping line feeds and tabs as they are when `keepingLineBreaks`: for a
  /// body printed as lines (`courier get` on a terminal), where a line break is the text's own.
  /// A CR is escaped even then: it would let a line overwrite itself.
  /// - Parameters:
  ///   - text: the text.
  ///   - keepingLineBreaks: whether LF and tab pass through.
  /// - Returns: the escaped text.
  package static func escaped(_ text: String, keepingLineBreaks: Bool) -> String {
    func escapes(_ scalar: Unicode.Scalar) -> Bool {
      needsEscape(scalar) && !(keepingLineBreaks && (scalar == "\n" || scalar == "\t"))
    }
    guard text.unicodeScalars.contains(where: escapes) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      guard escapes(scalar) else {
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

  /// Whether ``escaped(_:)`` shows a scalar as an escape: C0 and C1 controls, DEL, U+2028 and
  /// U+2029, and the bidi controls (embeddings, overrides, isolates, marks).
  /// - Parameter scalar: the scalar.
  /// - Returns: true when a terminal could act on it.
  package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0x061C,
      0x200E, 0x200F:
      return true
    default:
      return false
    }
  }
}
