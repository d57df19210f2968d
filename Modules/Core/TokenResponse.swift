import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The body of `POST /auth/token` and `POST /auth/refresh`.
package struct TokenResponse: Decodable, Sendable {
  /// The bearer token.
  package var accessToken: String
  /// The one-use refresh token.
  package var refreshToken: String?
  /// The access token's lifetime in seconds.
  package var expiresIn: Double?

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
  package static func credentials(from body: Data, now: Date) throws -> Credentials {
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
