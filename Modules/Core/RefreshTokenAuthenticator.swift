import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The shipped `Authenticator`, speaking the reference backend's contract
/// (Docs/contract.md): `POST <refreshURL>` with `{"refresh_token"}` answers a new pair
/// (`access_token`, `refresh_token`, `expires_in`); a refresh token works once, and a 400 or
/// 401 means the session is over. Tokens live in a `CredentialStore`.
package struct RefreshTokenAuthenticator: Authenticator {
  /// Where the session's tokens live.
  package let store: any CredentialStore
  /// The renewal endpoint, `{base}/auth/refresh` for the reference backend.
  package let refreshURL: URL
  private let wallClock: any WallClock

  /// Creates an authenticator.
  /// - Parameters:
  ///   - store: where the session's tokens live.
  ///   - refreshURL: the renewal endpoint.
  ///   - wallClock: the clock that dates a new token's expiry.
  package init(
    store: any CredentialStore, refreshURL: URL, wallClock: any WallClock = SystemWallClock()
  ) {
    self.store = store
    self.refreshURL = refreshURL
    self.wallClock = wallClock
  }

  /// The stored credentials.
  /// - Returns: them, or nil when logged out.
  /// - Throws: `fileUnavailable` when the saved session cannot be read.
  package func credentials() throws -> Credentials? {
    do {
      return try store.load()
    } catch {
      throw CourierError(
        .fileUnavailable, serverMessage: "The saved session couldn't be read. Please log in again.",
        underlying: String(describing: error))
    }
  }

  /// Posts the refresh token and saves the new pair; a refused token clears the session.
  /// - Parameters:
  ///   - stale: the credentials to renew.
  ///   - transport: the pipeline beneath the auth step.
  /// - Returns: the new credentials, or nil when there is no refresh token or it was refused.
  /// - Throws: a transport error, a classified failure of the call, a malformed reply.
  package func refresh(_ stale: Credentials, through transport: any Transport) async throws
    -> Credentials?
  {
    guard let refreshToken = stale.refreshToken else { return nil }
    let body = try JSONEncoder().encode(["refresh_token": refreshToken])
    let request = try HTTPRequest(
      checking: refreshURL, method: .post, headerFields: [.contentType: "application/json"])
    let (response, answer) = try await transport.send(
      request, body: .bytes(body), options: TransportOptions())
    if response.status == 401 || response.status == 400 {
      try? store.clear()
      return nil
    }
    if let failure = ResponseClassifier.classify(
      response, body: answer.bytes, context: request.summary)
    {
      throw failure
    }
    let renewed = try TokenResponse.credentials(from: answer.bytes, now: wallClock.now())
    try store.save(renewed)
    return renewed
  }
}
