import CourierSystem
import HTTPTypes

extension HTTPResponse {
  /// The most header fields a response may have: `HTTPFields` stops the process at 65,535.
  package static let maxReceivedFields = Int(UInt16.max) - 1

  /// A response head as an adapter received it, checked where swift-http-types would stop the
  /// process instead (a status outside 0...999, more fields than `HTTPFields` holds) or could
  /// not carry it (a field name that is not a token, RFC 9110 §5.1): such a reply is refused
  /// as `invalidResponse`, a bad reply, never a crash. Field values are taken as
  /// `HTTPField` takes them (a control character becomes a space).
  /// - Parameters:
  ///   - status: the status code the server sent.
  ///   - fields: the header fields, in order, as received.
  ///   - context: the request's summary, for the error.
  /// - Throws: `CourierError.invalidResponse`, code `reply_status_invalid`,
  ///   `reply_field_name_invalid` or `reply_too_many_fields`.
  package init(
    receivedStatus status: Int, fields: some Collection<(name: String, value: String)>,
    context: String?
  ) throws(CourierError) {
    guard (0...999).contains(status) else {
      throw Self.badReply("reply_status_invalid", "status \(status)", context: context)
    }
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
    self.init(status: Status(code: status), headerFields: headerFields)
  }

  private static func badReply(_ code: String, _ what: String, context: String?) -> CourierError {
    CourierError(
      .invalidResponse, code: code, mayHaveReachedServer: true,
      underlying: "the reply's \(what) is not valid HTTP", context: context)
  }
}
