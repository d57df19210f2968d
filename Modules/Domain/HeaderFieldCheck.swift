#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
