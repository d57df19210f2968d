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
  /// smuggled). The same length repeated is one length (RFC 9110 §8.6).
  /// - Parameter fields: the head's fields, as received.
  /// - Returns: what is wrong, for logs; nil for a head with one length or none.
  package static func receivedLengthConflict(
    in fields: some Collection<(name: String, value: String)>
  ) -> String? {
    var length: String?
    var encoded = false
    for field in fields {
      // Most fields are neither: their names' lengths differ from both before any case is
      // folded.
      let size = field.name.utf8.count
      guard size == 14 || size == 17 else { continue }
      if size == 17, field.name.lowercased() == "transfer-encoding" {
        encoded = true
        continue
      }
      guard size == 14, field.name.lowercased() == "content-length" else { continue }
      for element in field.value.split(separator: ",", omittingEmptySubsequences: false) {
        let value = element.trimmingSpacesAndTabs()
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
          return "Content-Length “\(LogText.escaped(String(field.value.prefix(64))))”"
        }
        // A number, leading zeros aside (`010` is ten).
        let number = String(value.drop { $0 == "0" })
        if let known = length, known != number {
          return "Content-Length \(known.isEmpty ? "0" : known) and \(value)"
        }
        length = number
      }
    }
    if encoded, let length {
      return "Content-Length \(length.isEmpty ? "0" : length) beside Transfer-Encoding"
    }
    return nil
  }

  private static func badReply(_ code: String, _ what: String, context: String?) -> CourierError {
    CourierError(
      .invalidResponse, code: code, mayHaveReachedServer: true,
      underlying: "the reply's \(what) is not valid HTTP", context: context)
  }
}

extension CourierError {
  /// A reply whose fields give its body more than one length (`HTTPResponse
  /// .receivedLengthConflict(in:)`): which bytes are the reply is unknown (decision 2430).
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
  /// (decision 2430).
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

  /// Whether this is a reply that ended before its length (`reply_truncated`, decision 2432).
  package var isTruncatedReply: Bool {
    kind == .invalidResponse && code == TransportErrorTable.Outcome.truncatedReply.code
  }
}
