import Foundation

/// What may go into a request's header fields, checked the same way before any adapter sends
/// them (RFC 9110 §5.1, §5.5), so that every transport refuses the same requests with the same
/// error instead of one dropping a field silently and another refusing it.
public enum HeaderFieldCheck {
  /// Whether a byte may appear in a field name (a `token`).
  /// - Parameter byte: the byte.
  /// - Returns: true for ALPHA, DIGIT, the marks `!#$%&'*+-.^_|~` and the backtick.
  public static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  /// Whether text can be sent as a field value: no control character but horizontal tab (no
  /// CR or LF that would split the request, no NUL that would cut it, no DEL).
  /// - Parameter value: the value.
  /// - Returns: true when it can be sent as it is.
  public static func isValidValue(_ value: String) -> Bool {
    !value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
  }

  /// Whether text can be a bearer credential (RFC 6750's `b64token`, loosened to any visible
  /// ASCII character): not empty, no space, no control character, nothing beyond ASCII.
  /// - Parameter token: the token.
  /// - Returns: true when `Authorization: Bearer <token>` can carry it unchanged.
  public static func isValidCredential(_ token: String) -> Bool {
    !token.isEmpty && token.utf8.allSatisfy { (0x21...0x7E).contains($0) }
  }

  /// Checks every header field of a request.
  /// - Parameter request: the request.
  /// - Throws: `CourierError.invalidInput` (code `invalid_header`) naming the first bad field;
  ///   the value itself is never quoted (it may be a credential).
  public static func check(_ request: HTTPRequest) throws {
    for field in request.headers {
      guard !field.name.isEmpty, field.name.utf8.allSatisfy(isTokenByte) else {
        throw CourierError(
          .invalidInput, code: "invalid_header",
          serverMessage: "The header name “\(LogText.escaped(field.name))” isn't a valid token.",
          context: request.summary)
      }
      guard isValidValue(field.value) else {
        throw CourierError(
          .invalidInput, code: "invalid_header",
          serverMessage:
            "The value of header “\(field.name)” contains a line break or another control "
            + "character.",
          context: request.summary)
      }
    }
  }
}

/// Text made safe for a log line or a terminal: one line, no control characters.
public enum LogText {
  /// Escapes C0 and C1 control characters, DEL, line and paragraph separators and the bidi
  /// controls: CR as `\r`, LF as `\n`, tab as `\t`, ESC as `\e`, the others as `\xHH` or
  /// `\u{HHHH}`. Backslashes are left alone; the result is for people, not for parsing.
  /// - Parameter text: the text.
  /// - Returns: the escaped text.
  public static func escaped(_ text: String) -> String {
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
          ? String(format: "\\x%02X", scalar.value) : String(format: "\\u{%04X}", scalar.value)
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
