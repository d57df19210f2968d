import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Turns an HTTP response into a `CourierError`, or nothing when it is a success.
public enum ResponseClassifier {
  /// Classifies a response.
  /// - Parameters:
  ///   - response: the response, of any status.
  ///   - body: its body's bytes (an error body says what the server refused).
  ///   - attempts: how many attempts the call made to get it (1 without retries).
  ///   - now: the time used to read a `Retry-After` given as a date.
  ///   - context: what was being done, for logs.
  /// - Returns: nil for 1xx, 2xx and 304; the error for anything else: `invalidResponse`
  ///   (`reply_status_invalid`) for a status outside 100–599. A redirect that
  ///   reaches the caller is one the transport would not follow (to another origin, decision
  ///   0503): the request did not reach the intended server, so it is `notTheServer`, as are
  ///   407 (a proxy wants credentials), 511 (a captive portal wants a login, RFC 6585) and a
  ///   4xx refusal without the API's error body (a proxy's page).
  public static func classify(
    _ response: HTTPResponse, body: Data, attempts: Int = 1, now: Date = Date(),
    context: String? = nil
  ) -> CourierError? {
    let status = response.status.code
    // HTTP's statuses are 100 to 599 (RFC 9110 §15): a 600 or a 099 is a reply that makes no
    // sense, not a refusal by the server. A queued write it answered stays pending.
    guard (100...599).contains(status) else {
      return CourierError(
        .invalidResponse, status: status, code: "reply_status_invalid",
        mayHaveReachedServer: true, attempts: attempts,
        underlying: "status \(status) is not an HTTP status", context: context)
    }
    if (300..<400).contains(status), status != 304 {
      return CourierError(
        .notTheServer, status: status, code: "redirected_elsewhere",
        attempts: attempts, underlying: response.headerFields[.location].map(redactedURL),
        context: context)
    }
    if status == 407 || status == 511 {
      return CourierError(
        .notTheServer, status: status,
        code: status == 407 ? "proxy_authentication_required" : "network_login_required",
        attempts: attempts, context: context)
    }
    guard status >= 400 else { return nil }
    let problem = ServerProblem.decode(body, contentType: response.headerFields[.contentType])
    var error = CourierError(
      .business, status: status, code: problem.code, serverMessage: problem.message,
      field: problem.field, current: problem.current, attempts: attempts,
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
      error.retryAfter = RetryAfter.parse(response.headerFields[.retryAfter], now: now)
    case 429, 503:
      error.kind = .overloaded
      error.serverMessage = nil
      error.retryAfter = RetryAfter.parse(response.headerFields[.retryAfter], now: now)
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
