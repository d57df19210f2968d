import CourierSystem
import HTTPTypes

extension HTTPResponse {
  /// The most header fields a response may have: `HTTPFields` stops the process at 65,535.
  package static let maxReceivedFields = Int(UInt16.max) - 1

  /// A response head as an adapter received it, checked where swift-http-types would stop the
  /// process instead (a status outside 0...999, more fields than `HTTPFields` holds) or could
  /// not carry it (a field name that is not a token, RFC 9110 §5.1), and where the fields do
  /// not say how long the body is (`receivedLengthConflict(in:)`): such a reply is refused as
  /// `invalidResponse`, a bad reply, never a crash. Field values are taken as `HTTPField` takes
  /// them (a control character becomes a space).
  /// - Parameters:
  ///   - status: the status code the server sent.
  ///   - fields: the header fields, in order, as received.
  ///   - context: the request's summary, for the error.
  /// - Throws: `CourierError.invalidResponse`, code `reply_status_invalid`,
  ///   `reply_field_name_invalid`, `reply_too_many_fields` or `reply_length_conflict`.
  package init(
    receivedStatus status: Int, fields: some Collection<(name: String, value: String)>,
    context: String?
  ) throws(CourierError) {
    guard (0...999).contains(status) else {
      throw Self.badReply("reply_status_invalid", "status \(status)", context: context)
    }
    let headerFields = try Self.receivedFields(fields, context: context)
    if let conflict = Self.receivedLengthConflict(in: fields) {
      throw CourierError.lengthConflict(conflict, context: context)
    }
    self.init(status: Status(code: status), headerFields: headerFields)
  }

  /// Header or trailer fields as an adapter received them, checked as
  /// `init(receivedStatus:fields:context:)` checks a head's.
  /// - Parameters:
  ///   - fields: the fields, in order, as received.
  ///   - context: the request's summary, for the error.
  /// - Returns: the fields.
  /// - Throws: `CourierError.invalidResponse`, code `reply_field_name_invalid` or
  ///   `reply_too_many_fields`.
  package static func receivedFields(
    _ fields: some Collection<(name: String, value: String)>, context: String?
  ) throws(CourierError) -> HTTPFields {
    guard fields.count <= Self.maxReceivedFields else {
      throw Self.badReply(
        "reply_too_many_fields", "\(fields.count) header fields", context: context)
    }
    var headerFields = HTTPFields()
    headerFields.reserveCapacity(fields.count)
    for field in fields {
      guard let name = HTTPField.Name(field.name) else {
        throw Self.badReply(
          "reply_field_name_invalid",
          "header field name “\(LogText.escaped(String(field.name.prefix(64))))”",
          context: context)
      }
      headerFields.append(HTTPField(name: name, value: field.value))
    }
    return headerFields
  }

  /// Why a head's fields do not give the body one length (RFC 9112 §6.3), or nil when they
  /// do: `Content-Length` values that differ (in two fields or in one list, `10, 20`), one
  /// that is not a number, or a `Content-Length` beside a `Transfer-Encoding` (which the
  /// RFC says ought to be handled as an error: it is how responses are split and requests
  /// smuggled). The same length repeated is one length (RFC 9110 §8.6). By bytes, without an
  /// allocation for a head that is right: this runs for every response.
  /// - Parameter fields: the head's fields, as received.
  /// - Returns: what is wrong, for logs; nil for a head with one length or none.
  package static func receivedLengthConflict(
    in fields: some Collection<(name: String, value: String)>
  ) -> String? {
    var length: UInt64?
    var encoded = false
    for field in fields {
      if isName(field.name, "transfer-encoding") {
        encoded = true
        continue
      }
      guard isName(field.name, "content-length") else { continue }
      if let wrong = merge(field.value, into: &length) { return wrong }
    }
    if encoded, let length { return "Content-Length \(length) beside Transfer-Encoding" }
    return nil
  }

  /// Whether a field's name is `lowercased`, in any case (ASCII).
  private static func isName(_ name: String, _ lowercased: StaticString) -> Bool {
    guard name.utf8.count == lowercased.utf8CodeUnitCount else { return false }
    return lowercased.withUTF8Buffer { expected in
      zip(name.utf8, expected).allSatisfy { byte, wanted in
        (0x41...0x5A).contains(byte) ? byte | 0x20 == wanted : byte == wanted
      }
    }
  }

  /// Takes the numbers of a `Content-Length` value, a list of one or more (`10`, `10, 10`;
  /// an empty member is skipped, as in any list, RFC 9110 §5.6.1), into the length found so far.
  /// - Returns: what is wrong, or nil: a value without a number, a member that is not a number
  ///   of at most 18 digits (more is no body a reply can have), or one that differs from the
  ///   length.
  private static func merge(_ value: String, into length: inout UInt64?) -> String? {
    func invalid() -> String { "Content-Length “\(LogText.escaped(String(value.prefix(64))))”" }
    var number: UInt64 = 0
    var digits = 0
    var spaced = false  // spaces after the digits
    var members = 0
    func take() -> String? {
      guard digits > 0 else { return nil }
      members += 1
      if let known = length, known != number { return "Content-Length \(known) and \(number)" }
      length = number
      (number, digits, spaced) = (0, 0, false)
      return nil
    }
    for byte in value.utf8 {
      switch byte {
      case 0x30...0x39 where !spaced && digits < 18:
        number = number * 10 + UInt64(byte - 0x30)
        digits += 1
      case 0x20, 0x09:
        spaced = digits > 0
      case 0x2C:
        if let wrong = take() { return wrong }
      default:
        return invalid()
      }
    }
    if let wrong = take() { return wrong }
    return members > 0 ? nil : invalid()
  }

  private static func badReply(_ code: String, _ what: String, context: String?) -> CourierError {
    CourierError(
      .invalidResponse, code: code, mayHaveReachedServer: true,
      underlying: "the reply's \(what) is not valid HTTP", context: context)
  }
}

extension CourierError {
  /// A reply whose fields give its body more than one length (`HTTPResponse
  /// .receivedLengthConflict(in:)`): which bytes are the reply is unknown (decision 2434).
  /// - Parameters:
  ///   - conflict: what the fields say, for logs.
  ///   - context: the request's summary.
  /// - Returns: `invalidResponse`, code `reply_length_conflict`.
  package static func lengthConflict(_ conflict: String, context: String?) -> CourierError {
    CourierError(
      .invalidResponse, code: "reply_length_conflict", mayHaveReachedServer: true,
      underlying: "the reply's lengths conflict: \(conflict)", context: context)
  }

  /// A reply whose first line is not an HTTP status line (RFC 9112 §4): the HTTP-version's
  /// name is `HTTP` in capitals, then a digit or two, a space and a three-digit code
  /// (decision 2434).
  /// - Parameters:
  ///   - line: the line as received, for logs.
  ///   - context: the request's summary.
  /// - Returns: `invalidResponse`, code `reply_status_line_invalid`.
  package static func statusLineInvalid(_ line: String, context: String?) -> CourierError {
    CourierError(
      .invalidResponse, code: "reply_status_line_invalid", mayHaveReachedServer: true,
      underlying:
        "the reply's status line “\(LogText.escaped(String(line.prefix(64))))” is not HTTP",
      context: context)
  }

  /// Whether this is a reply that ended before its length (`reply_truncated`, decision 2436).
  package var isTruncatedReply: Bool {
    kind == .invalidResponse && code == TransportErrorTable.Outcome.truncatedReply.code
  }
}
