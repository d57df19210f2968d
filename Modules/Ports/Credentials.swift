#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A session's tokens.
public struct Credentials: Sendable, Equatable, Codable {
  /// The bearer token sent with each request.
  package var accessToken: String
  /// The token that buys a new pair once.
  package var refreshToken: String?
  /// When the access token expires, if the server said.
  package var expiresAt: Date?

  /// Creates credentials.
  /// - Parameters:
  ///   - accessToken: the bearer token.
  ///   - refreshToken: the refresh token.
  ///   - expiresAt: the access token's expiry.
  public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil) {
    self.accessToken = accessToken
    self.refreshToken = refreshToken
    self.expiresAt = expiresAt
  }
}
