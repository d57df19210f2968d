import Foundation

/// A session's tokens.
public struct Credentials: Sendable, Equatable, Codable {
  /// The bearer token sent with each request.
  public var accessToken: String
  /// The token that buys a new pair once.
  public var refreshToken: String?
  /// When the access token expires, if the server said.
  public var expiresAt: Date?

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

/// Keeps the session's tokens between runs.
public protocol CredentialStore: Sendable {
  /// Loads the stored credentials.
  /// - Returns: them, or nil when logged out.
  /// - Throws: when the store exists but cannot be read.
  func load() throws -> Credentials?
  /// Saves credentials, replacing any.
  /// - Parameter credentials: the credentials.
  /// - Throws: when they cannot be written.
  func save(_ credentials: Credentials) throws
  /// Forgets the credentials.
  /// - Throws: when they cannot be removed.
  func clear() throws
}
