#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What may go into a request's header field values (RFC 9110 §5.5), for text Courier takes
/// from outside before it becomes a field: a saved token is refused as a damaged session rather
/// than sent changed. (`HTTPFields` itself turns a control character into a space, so no value
/// can split a request whatever an adapter does; decision 2201.)
package enum HeaderFieldCheck {
  /// Whether text can be sent as a field value: no control character but horizontal tab (no
  /// CR or LF that would split the request, no NUL that would cut it, no DEL).
  /// - Parameter value: the value.
  /// - Returns: true when it can be sent as it is.
  package static func isValidValue(_ value: String) -> Bool {
    !value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
  }

  /// Whether text can be a bearer credential (RFC 6750's `b64token`, loosened to any visible
  /// ASCII character): not empty, no space, no control character, nothing beyond ASCII.
  /// - Parameter token: the token.
  /// - Returns: true when `Authorization: Bearer <token>` can carry it unchanged.
  package static func isValidCredential(_ token: String) -> Bool {
    !token.isEmpty && token.utf8.allSatisfy { (0x21...0x7E).contains($0) }
  }
}
