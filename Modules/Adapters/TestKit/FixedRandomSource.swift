import CourierPorts
import Synchronization

/// A random source that returns a fixed sequence of draws (the last one repeats), so jittered
/// delays are predictable in tests.
public final class FixedRandomSource: RandomSource {
  private let draws: Mutex<[Double]>

  /// Creates a source.
  /// - Parameter draws: the draws in order, each in `0..<1`; the last repeats.
  public init(_ draws: Double...) { self.draws = Mutex(draws.isEmpty ? [0.5] : draws) }

  /// The next draw.
  /// - Returns: a number in `0..<1`.
  public func next() -> Double {
    draws.withLock { draws in
      draws.count > 1 ? draws.removeFirst() : draws[0]
    }
  }
}

/// A credential store in memory, for tests.
public final class InMemoryCredentialStore: CredentialStore {
  private let state: Mutex<(credentials: Credentials?, saves: Int)>

  /// Creates a store.
  /// - Parameter credentials: the initial credentials.
  public init(_ credentials: Credentials? = nil) { state = Mutex((credentials, 0)) }

  /// How many times `save` was called.
  public var saveCount: Int { state.withLock { $0.saves } }

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
