import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a session's credentials come from and how they are renewed: the port behind
/// `AuthTransport`. The decorator decides when (which origin gets the token, single flight,
/// refresh before the stored expiry and once after a 401); an authenticator only knows the
/// server's contract for renewing a session.
package protocol Authenticator: Sendable {
  /// The session's current credentials.
  /// - Returns: them, or nil when logged out.
  /// - Throws: when the stored session exists but cannot be read.
  func credentials() throws -> Credentials?

  /// Renews the session, saving and returning the new credentials.
  /// - Parameters:
  ///   - stale: the credentials that expired or were refused.
  ///   - transport: the pipeline beneath the auth step, for the renewal call.
  /// - Returns: the new credentials, or nil when the server refused to renew (the session is
  ///   over and has been forgotten: the user must log in again).
  /// - Throws: when the renewal could not be made (offline, a server error...).
  func refresh(_ stale: Credentials, through transport: any Transport) async throws
    -> Credentials?
}
