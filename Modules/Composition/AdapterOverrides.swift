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

/// Adapters a test or an embedding app supplies instead of the ones named in the config.
public struct AdapterOverrides: Sendable {
  /// The base transport (under auth, retry and logging).
  package var transport: (any Transport)?
  /// The credential store.
  package var credentials: (any CredentialStore)?
  /// What reports the network path (a `ManualPathMonitor` in tests).
  package var pathMonitor: (any PathMonitor)?
  /// The local store (records and outbox).
  package var localStore: (any LocalStore)?
  /// The image compressor.
  package var compressor: (any ImageCompressor)?

  /// Creates overrides.
  /// - Parameters:
  ///   - transport: the base transport.
  ///   - credentials: the credential store.
  ///   - pathMonitor: the path monitor.
  ///   - localStore: the local store.
  ///   - compressor: the image compressor.
  public init(
    transport: (any Transport)? = nil, credentials: (any CredentialStore)? = nil,
    pathMonitor: (any PathMonitor)? = nil, localStore: (any LocalStore)? = nil,
    compressor: (any ImageCompressor)? = nil
  ) {
    self.transport = transport
    self.credentials = credentials
    self.pathMonitor = pathMonitor
    self.localStore = localStore
    self.compressor = compressor
  }
}
