import Foundation

/// What a server said in an error body, from `{code, message}`, RFC 9457
/// `application/problem+json`, or neither.
public struct ServerProblem: Sendable, Equatable {
  /// The machine-readable code.
  public var code: String?
  /// The message for a person, plain text only.
  public var message: String?
  /// The field a validation error names.
  public var field: String?
  /// The server's current record, for conflicts.
  public var current: JSONValue?

  /// Creates a problem.
  /// - Parameters:
  ///   - code: the code.
  ///   - message: the plain-text message.
  ///   - field: the field.
  ///   - current: the current record.
  public init(
    code: String? = nil, message: String? = nil, field: String? = nil, current: JSONValue? = nil
  ) {
    self.code = code
    self.message = message
    self.field = field
    self.current = current
  }

  /// Reads an error body. Never throws: garbage, HTML or an empty body give an empty problem.
  /// - Parameters:
  ///   - body: the body bytes.
  ///   - contentType: the `Content-Type` header, if any.
  /// - Returns: what could be read.
  public static func decode(_ body: Data, contentType: String?) -> ServerProblem {
    guard !body.isEmpty, body.count <= 1 << 20,
      let json = try? JSONValue(parsing: body),
      case .object = json
    else { return ServerProblem() }
    let isProblem =
      contentType?.lowercased().contains("problem+json") == true
      || json["type"] != nil || json["detail"] != nil
    var problem = ServerProblem()
    problem.code = json["code"]?.stringValue.flatMap(sanitizeCode)
    let candidates: [JSONValue?] =
      isProblem
      ? [json["detail"], json["message"], json["title"]] : [json["message"], json["detail"]]
    problem.message = candidates.lazy.compactMap { $0?.stringValue.flatMap(plainText) }.first
    problem.field = json["field"]?.stringValue.flatMap(plainText)
    problem.current = json["current"]
    return problem
  }

  /// Keeps a code only when it looks like one (`image_too_large`).
  static func sanitizeCode(_ code: String) -> String? {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_-.:/"))
    guard !code.isEmpty, code.count <= 100,
      code.unicodeScalars.allSatisfy({ allowed.contains($0) })
    else { return nil }
    return code
  }

  /// Keeps a message only when it is plain text fit for a person: no markup, no control
  /// characters, trimmed and bounded.
  /// - Parameter text: the server's text.
  /// - Returns: the text, or nil when it is not fit to show.
  public static func plainText(_ text: String) -> String? {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !trimmed.isEmpty else { return nil }
    let lowered = trimmed.lowercased()
    if lowered.contains("<html") || lowered.contains("<!doctype") || lowered.contains("<body")
      || lowered.range(of: #"<[a-z/!][^>]*>"#, options: .regularExpression) != nil
    {
      return nil
    }
    let cleaned = String(
      String.UnicodeScalarView(
        trimmed.unicodeScalars.map {
          CharacterSet.controlCharacters.contains($0) ? " " : $0
        }))
    return cleaned.count > 300 ? String(cleaned.prefix(299)) + "…" : cleaned
  }
}

/// Turns an HTTP response into a `CourierError`, or nothing when it is a success.
public enum ResponseClassifier {
  /// Classifies a response.
  /// - Parameters:
  ///   - response: the response, of any status.
  ///   - now: the time used to read a `Retry-After` given as a date.
  ///   - context: what was being done, for logs.
  /// - Returns: nil for 1xx, 2xx and 304; the error for anything else. A redirect that
  ///   reaches the caller is one the transport would not follow (to another origin, decision
  ///   0503): the request did not reach the intended server, so it is `notTheServer`, as are
  ///   407 (a proxy wants credentials), 511 (a captive portal wants a login, RFC 6585) and a
  ///   4xx refusal without the API's error body (a proxy's page).
  public static func classify(
    _ response: HTTPResponse, now: Date = Date(), context: String? = nil
  ) -> CourierError? {
    let status = response.status
    if (300..<400).contains(status), status != 304 {
      return CourierError(
        .notTheServer, status: status, code: "redirected_elsewhere",
        attempts: response.attempts, underlying: response.headers["Location"].map(redactedURL),
        context: context)
    }
    if status == 407 || status == 511 {
      return CourierError(
        .notTheServer, status: status,
        code: status == 407 ? "proxy_authentication_required" : "network_login_required",
        attempts: response.attempts, context: context)
    }
    guard status >= 400 else { return nil }
    let problem = ServerProblem.decode(response.body, contentType: response.headers["Content-Type"])
    var error = CourierError(
      .business, status: status, code: problem.code, serverMessage: problem.message,
      field: problem.field, current: problem.current, attempts: response.attempts,
      context: context)
    switch status {
    case 401:
      error.kind = .unauthorized
      // The server's text for an expired token is not a sentence for a person.
      if error.code != "invalid_credentials" { error.serverMessage = nil }
    case 408:
      error.kind = .timedOut
      error.mayHaveReachedServer = true
    case 409 where problem.code == "version_conflict":
      error.kind = .conflict
    case 409 where problem.code == "idempotency_in_flight":
      error.kind = .overloaded
      error.serverMessage = nil
      error.retryAfter = RetryAfter.parse(response.headers["Retry-After"], now: now)
    case 429, 503:
      error.kind = .overloaded
      error.serverMessage = nil
      error.retryAfter = RetryAfter.parse(response.headers["Retry-After"], now: now)
    case 500..<600:
      error.kind = .server
      error.serverMessage = nil
      // A 5xx may come after the server did part of the work.
      error.mayHaveReachedServer = true
    default:
      error.kind = .business
      // Every refusal of the API carries its error body (the contract); a 4xx page without
      // one is a proxy's or a portal's, and says nothing about the server (413 excepted: the
      // contract lets a proxy send it before the body, and it is final either way).
      if status != 413, problem.code == nil, problem.message == nil {
        error.kind = .notTheServer
        error.code = DeliveryProof.Shortfall.refusalWithoutServerBody.rawValue
      }
    }
    return error
  }
}

/// A URL for logs: scheme, host, port and path only (no user, password, query or fragment).
func redactedURL(_ text: String) -> String {
  guard var parts = URLComponents(string: text) else { return "(unreadable URL)" }
  parts.user = nil
  parts.password = nil
  parts.query = nil
  parts.fragment = nil
  return parts.string ?? "(unreadable URL)"
}

/// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
  /// Parses the header.
  /// - Parameters:
  ///   - value: the header's value.
  ///   - now: the current time, for a date.
  /// - Returns: the wait (zero for a date in the past), or nil when absent or unreadable.
  public static func parse(_ value: String?, now: Date) -> Duration? {
    guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
    if raw.allSatisfy(\.isASCII), raw.allSatisfy(\.isNumber) {
      guard raw.count <= 10, let seconds = Int64(raw) else { return nil }
      return .seconds(seconds)
    }
    guard let date = httpDate(raw) else { return nil }
    let interval = date.timeIntervalSince(now)
    return interval <= 0 ? .zero : .milliseconds(Int64((interval * 1000).rounded(.up)))
  }

  /// Parses an HTTP-date in any of the three forms RFC 9110 requires a recipient to accept.
  /// - Parameter text: the date text.
  /// - Returns: the date, or nil.
  public static func httpDate(_ text: String) -> Date? {
    for format in [
      "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ] {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "GMT")
      formatter.dateFormat = format
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }
}
