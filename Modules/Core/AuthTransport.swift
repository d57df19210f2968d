import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// A transport decorator that adds the bearer token and, on a 401, refreshes the session once
/// and replays the request once. Concurrent requests that meet a 401 share one refresh (single
/// flight). A refused refresh clears the stored session and returns the 401, which the client
/// reports as "session expired, log in again".
///
/// The token goes only to the server's origin (scheme, host and port of `credentialOrigin`,
/// by default the refresh URL's): a request to any other origin is sent as it is, without
/// `Authorization` and without a refresh (Docs/decisions/0005). A stored token that cannot be
/// sent as a header value (a CR or LF, a space, a control character) is refused before
/// anything is sent, the same way whichever adapter lies beneath.
public final class AuthTransport: Transport {
  private let base: any Transport
  private let store: any CredentialStore
  private let refreshURL: URL
  private let credentialOrigin: URL
  private let wallClock: any WallClock
  private let refreshing = Mutex<Task<Credentials?, any Error>?>(nil)

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport requests go through (refreshes too).
  ///   - store: where the session's tokens live.
  ///   - refreshURL: the `POST /auth/refresh` endpoint.
  ///   - wallClock: the clock for token expiry times.
  ///   - credentialOrigin: a URL of the only origin that gets the token; the refresh URL's
  ///     origin when nil.
  public init(
    _ base: any Transport, store: any CredentialStore, refreshURL: URL,
    wallClock: any WallClock = SystemWallClock(), credentialOrigin: URL? = nil
  ) {
    self.base = base
    self.store = store
    self.refreshURL = refreshURL
    self.credentialOrigin = credentialOrigin ?? refreshURL
    self.wallClock = wallClock
  }

  /// Sends with the session's token, refreshing once on a 401 (a body is read again for the
  /// replay).
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, if any.
  ///   - options: per-call options.
  /// - Returns: the response.
  /// - Throws: a transport error, or a failure of the refresh itself.
  public func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> HTTPResponse {
    try await authorized(request) { try await base.send($0, body: body, options: options) }
  }

  private func authorized(
    _ request: HTTPRequest, _ send: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    // A caller that set its own Authorization keeps it, and gets no refresh.
    if request.headers["Authorization"] != nil { return try await send(request) }
    // Another origin never sees the session (decision 0005).
    guard RedirectRule.sameOrigin(request.url, credentialOrigin) else {
      return try await send(request)
    }
    let credentials = try loadCredentials()
    var first = request
    if let credentials {
      first.headers["Authorization"] = try Self.bearer(credentials.accessToken, request)
    }
    let response = try await send(first)
    guard response.status == 401, let credentials, credentials.refreshToken != nil else {
      return response
    }
    guard let renewed = try await renew(after: credentials) else { return response }
    var replay = request
    replay.headers["Authorization"] = try Self.bearer(renewed.accessToken, request)
    return try await send(replay)
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

  private func loadCredentials() throws -> Credentials? {
    do {
      return try store.load()
    } catch {
      throw CourierError(
        .fileUnavailable, serverMessage: "The saved session couldn't be read. Please log in again.",
        underlying: String(describing: error))
    }
  }

  /// Refreshes unless another request already did since `stale` was used; joins a refresh
  /// under way.
  private func renew(after stale: Credentials) async throws -> Credentials? {
    let task = refreshing.withLock { current -> Task<Credentials?, any Error> in
      if let current { return current }
      let task = Task { [self] () async throws -> Credentials? in
        defer { refreshing.withLock { $0 = nil } }
        if let latest = try loadCredentials(), latest.accessToken != stale.accessToken {
          return latest
        }
        return try await refresh(stale)
      }
      current = task
      return task
    }
    return try await task.value
  }

  private func refresh(_ stale: Credentials) async throws -> Credentials? {
    guard let refreshToken = stale.refreshToken else { return nil }
    let body = try JSONEncoder().encode(["refresh_token": refreshToken])
    let request = HTTPRequest(
      method: .post, url: refreshURL, headers: ["Content-Type": "application/json"])
    let response = try await base.send(request, body: .bytes(body), options: TransportOptions())
    if response.status == 401 || response.status == 400 {
      try? store.clear()
      return nil
    }
    if let failure = ResponseClassifier.classify(response, context: "POST /auth/refresh") {
      throw failure
    }
    let renewed = try TokenResponse.credentials(from: response.body, now: wallClock.now())
    try store.save(renewed)
    return renewed
  }
}

/// The body of `POST /auth/token` and `POST /auth/refresh`.
public struct TokenResponse: Decodable, Sendable {
  /// The bearer token.
  public var accessToken: String
  /// The one-use refresh token.
  public var refreshToken: String?
  /// The access token's lifetime in seconds.
  public var expiresIn: Double?

  enum CodingKeys: String, CodingKey {
    case accessToken = "access_token"
    case refreshToken = "refresh_token"
    case expiresIn = "expires_in"
  }

  /// Decodes a token body into credentials.
  /// - Parameters:
  ///   - body: the JSON body.
  ///   - now: the time the response arrived.
  /// - Returns: the credentials.
  /// - Throws: `CourierError.decoding` when the body is not a token response,
  ///   `invalidResponse` (code `invalid_token`) when a token could not be sent as a header.
  public static func credentials(from body: Data, now: Date) throws -> Credentials {
    let token: TokenResponse
    do {
      token = try JSONDecoder().decode(TokenResponse.self, from: body)
    } catch {
      throw CourierError(.decoding, underlying: String(describing: error))
    }
    // A token that could not be sent back as it is would be dropped or refused later, on
    // every request: refuse it now, before it is saved.
    guard HeaderFieldCheck.isValidCredential(token.accessToken) else {
      throw CourierError(
        .invalidResponse, code: "invalid_token",
        underlying: "the token reply holds a character a header value cannot carry")
    }
    // A lifetime that is negative, not finite or beyond ten years is not one: no expiry.
    let lifetime = token.expiresIn.flatMap { $0.isFinite && $0 >= 0 && $0 < 315_360_000 ? $0 : nil }
    return Credentials(
      accessToken: token.accessToken, refreshToken: token.refreshToken,
      expiresAt: lifetime.map { now.addingTimeInterval($0) })
  }
}
