import CourierCore
import CourierCurl
import CourierDomain
import CourierFileStore
import CourierMemory
import CourierNetlink
import CourierPorts
import CourierSQLite
import CourierVips
import Synchronization

#if URLSessionTransport
  import CourierURLSession
#endif
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A credential store holding one fixed token (from `COURIER_TOKEN`): nothing is written.
package final class StaticCredentialStore: CredentialStore {
  private let credentials: Mutex<Credentials?>

  /// Creates a store.
  /// - Parameter credentials: the fixed credentials.
  package init(_ credentials: Credentials?) { self.credentials = Mutex(credentials) }

  /// The credentials.
  /// - Returns: them.
  package func load() throws -> Credentials? { credentials.withLock { $0 } }

  /// Replaces them in memory.
  /// - Parameter credentials: the credentials.
  package func save(_ credentials: Credentials) throws {
    self.credentials.withLock { $0 = credentials }
  }

  /// Forgets them.
  package func clear() throws { credentials.withLock { $0 = nil } }
}
