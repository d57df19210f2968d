#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
  /// Why the last `load()` returned nil although something was stored (an unreadable session
  /// file), as a sentence naming it and saying to log in again; nil when nothing was stored.
  var unusableReason: String? { get }
}

extension CredentialStore {
  /// No reason: a store that cannot hold an unreadable session.
  public var unusableReason: String? { nil }
}
