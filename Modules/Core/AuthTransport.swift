import CourierDomain
import CourierPorts
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport decorator that adds the bearer token, renews the session shortly before its
/// stored expiry, and, on a 401, renews it once and replays the request once. Concurrent
/// requests that need a renewal share one (single flight). A refused renewal forgets the
/// session and returns the 401, which the client reports as "session expired, log in again".
/// How a session is renewed is the `Authenticator`'s business (the shipped one is
/// `RefreshTokenAuthenticator`); this step decides when.
///
/// The token goes only to the server's origin (scheme, host and port of `credentialOrigin`):
/// a request to any other origin is sent as it is, without `Authorization` and without a
/// renewal (Docs/decisions/0005). A stored token that cannot be sent as a header value (a CR
/// or LF, a space, a control character) is refused before anything is sent, the same way
/// whichever adapter lies beneath. Nor does a session go over plain `http://` to a host that
/// is not loopback unless the configuration allows it (`InsecureHTTP`, decision 2431): such a
/// request is refused, before its token is added or renewed, with `insecure_http`.
package final class AuthTransport: Transport {
  private let base: any Transport

  /// The wrapped transport's (see `Transport.taskExecutor`).
  package var taskExecutor: (any TaskExecutor)? { base.taskExecutor }
  private let authenticator: any Authenticator
  private let credentialOrigin: URL
  private let wallClock: any WallClock
  private let refreshLeeway: Duration
  private let allowsInsecureHTTP: Bool
  private let refreshing = Mutex<Task<Credentials?, any Error>?>(nil)

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport requests go through (renewals too).
  ///   - authenticator: where credentials come from and how they are renewed.
  ///   - credentialOrigin: a URL of the only origin that gets the token.
  ///   - wallClock: the clock compared with a token's expiry.
  ///   - refreshLeeway: how long before its expiry a token is renewed (30 s by default).
  ///   - allowsInsecureHTTP: whether the session may go over plain `http://` to a host that
  ///     is not loopback (`allow_insecure_http`); refused by default.
  package init(
    _ base: any Transport, authenticator: any Authenticator, credentialOrigin: URL,
    wallClock: any WallClock = SystemWallClock(), refreshLeeway: Duration = .seconds(30),
    allowsInsecureHTTP: Bool = false
  ) {
    self.base = base
    self.authenticator = authenticator
    self.credentialOrigin = credentialOrigin
    self.wallClock = wallClock
    self.refreshLeeway = refreshLeeway
    self.allowsInsecureHTTP = allowsInsecureHTTP
  }

  /// Wraps a transport with the shipped `RefreshTokenAuthenticator`.
  /// - Parameters:
  ///   - base: the transport requests go through (refreshes too).
  ///   - store: where the session's tokens live.
  ///   - refreshURL: the `POST /auth/refresh` endpoint.
  ///   - wallClock: the clock for token expiry times.
  ///   - credentialOrigin: a URL of the only origin that gets the token; the refresh URL's
  ///     origin when nil.
  package convenience init(
    _ base: any Transport, store: any CredentialStore, refreshURL: URL,
    wallClock: any WallClock = SystemWallClock(), credentialOrigin: URL? = nil
  ) {
    self.init(
      base,
      authenticator: RefreshTokenAuthenticator(
        store: store, refreshURL: refreshURL, wallClock: wallClock),
      credentialOrigin: credentialOrigin ?? refreshURL, wallClock: wallClock)
  }

  /// Sends with the session's token, renewing it first when it is about to expire and once
  /// on a 401 (a body is read again for the replay).
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, if any.
  ///   - options: per-call options.
  /// - Returns: the response and its body.
  /// - Throws: a transport error, or a failure of the renewal itself.
  package func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await authorized(request) { try await base.send($0, body: body, options: options) }
  }

  private func authorized(
    _ request: HTTPRequest,
    _ send: @Sendable (HTTPRequest) async throws -> (HTTPResponse, ResponseBody)
  ) async throws -> (HTTPResponse, ResponseBody) {
    // A caller that set its own Authorization keeps it, and gets no refresh.
    if request.headerFields[.authorization] != nil { return try await send(request) }
    // Another origin never sees the session (decision 0005).
    guard let url = request.url, RedirectRule.sameOrigin(url, credentialOrigin) else {
      return try await send(request)
    }
    var credentials = try authenticator.credentials()
    // No token, and no renewal with the refresh token, in clear text off loopback (2431).
    if credentials != nil {
      try InsecureHTTP.check(url, allowed: allowsInsecureHTTP, context: request.summary)
    }
    var renewedAlready = false
    if let current = credentials, isAboutToExpire(current) {
      // Renewed before it lapses; should that fail, the old token is tried and a 401 still
      // gets its one renewal. Cancellation is not swallowed.
      do {
        credentials = try await renew(after: current)
        renewedAlready = true
      } catch let error as CourierError where error.kind == .cancelled {
        throw error
      } catch is CancellationError {
        throw CourierError(.cancelled, context: request.summary)
      } catch {
        credentials = current
      }
      // A refused renewal forgot the session: the request goes without a token.
    }
    var first = request
    if let credentials {
      first.headerFields[.authorization] = try Self.bearer(credentials.accessToken, request)
    }
    let answer = try await send(first)
    guard answer.0.status == 401, !renewedAlready, let credentials,
      credentials.refreshToken != nil
    else {
      return Self.redacting(answer, credentials)
    }
    guard let renewed = try await renew(after: credentials) else {
      return Self.redacting(answer, credentials)
    }
    var replay = request
    replay.headerFields[.authorization] = try Self.bearer(renewed.accessToken, request)
    return Self.redacting(try await send(replay), renewed, credentials)
  }

  /// A reply that is not a success with the session's tokens taken out of its body, header
  /// and trailer values (decision 2421): a server that repeats the request's headers in its error message
  /// must not put the token on a screen or in the outbox. A success passes exact (its body is
  /// data).
  /// - Parameters:
  ///   - answer: the reply.
  ///   - sessions: the credentials the request (and the one before it) carried.
  /// - Returns: the reply.
  static func redacting(
    _ answer: (HTTPResponse, ResponseBody), _ sessions: Credentials?...
  ) -> (HTTPResponse, ResponseBody) {
    guard !(200..<300).contains(answer.0.status.code) else { return answer }
    let redaction = SecretRedaction(
      sessions.flatMap { [$0?.accessToken, $0?.refreshToken] })
    guard !redaction.isEmpty else { return answer }
    var head = answer.0
    head.headerFields = redaction.fields(head.headerFields)
    return (
      head,
      ResponseBody(
        bytes: redaction.body(answer.1.bytes),
        trailerFields: answer.1.trailerFields.map(redaction.fields))
    )
  }

  /// Whether a token with a known expiry is within the leeway of it and can be renewed.
  private func isAboutToExpire(_ credentials: Credentials) -> Bool {
    guard let expiry = credentials.expiresAt, credentials.refreshToken != nil else {
      return false
    }
    return expiry.timeIntervalSince(wallClock.now()) <= refreshLeeway.seconds
  }

  /// The `Authorization` value for a token, or a refusal when the token cannot be sent as it
  /// is: both adapters then fail the same way, before anything leaves the process.
  static func bearer(_ token: String, _ request: HTTPRequest) throws -> String {
    guard HeaderFieldCheck.isValidCredential(token) else {
      throw damagedSession(context: request.summary)
    }
    return "Bearer \(token)"
  }

  /// The error for a stored token that cannot be sent.
  static func damagedSession(context: String?) -> CourierError {
    CourierError(
      .unauthorized, code: "damaged_session", serverMessage: "The saved session is damaged",
      underlying: "the access token holds a character a header value cannot carry",
      context: context)
  }

  /// Renews unless another request already did since `stale` was used; joins a renewal
  /// under way.
  private func renew(after stale: Credentials) async throws -> Credentials? {
    let task = refreshing.withLock { current -> Task<Credentials?, any Error> in
      if let current { return current }
      let task = Task { [self] () async throws -> Credentials? in
        defer { refreshing.withLock { $0 = nil } }
        if let latest = try authenticator.credentials(), latest.accessToken != stale.accessToken {
          return latest
        }
        return try await authenticator.refresh(stale, through: base)
      }
      current = task
      return task
    }
    return try await task.value
  }
}
