import CourierPorts
import Synchronization

/// A credential store in memory, for tests.
public final class InMemoryCredentialStore: CredentialStore {
  private let state: Mutex<(credentials: Credentials?, saves: Int)>

  /// Creates a store.
  /// - Parameter credentials: the initial credentials.
  public init(_ credentials: Credentials? = nil) { state = Mutex((credentials, 0)) }

  /// How many times `save` was called.
  package var saveCount: Int { state.withLock { $0.saves } }

  /// The credentials.
  /// - Returns: them.
  public func load() throws -> Credentials? { state.withLock { $0.credentials } }

  /// Replaces them.
  /// - Parameter credentials: the credentials.
  public func save(_ credentials: Credentials) throws {
    state.withLock {
      $0.credentials = credentials
      $0.saves += 1
    }
  }

  /// Forgets them.
  public func clear() throws { state.withLock { $0.credentials = nil } }
}
