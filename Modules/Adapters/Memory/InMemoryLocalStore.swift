import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record store and outbox held in memory, for tests of code that syncs records. Behaves as
/// the SQLite and file adapters do (it passes the same contract suite), and adds driving and
/// inspection: `failNextCommit(_:)` to simulate a disk failure, `state` and `commits` to look.
public final class InMemoryLocalStore: LocalStore {
  private struct Guarded {
    var state = LocalStoreState()
    var failures: [StoreError] = []
    var commits: [[StoreMutation]] = []
  }

  private let guarded = Mutex(Guarded())

  /// Creates an empty store.
  public init() {}

  /// Everything the store holds now.
  package var state: LocalStoreState { guarded.withLock { $0.state } }

  /// Every committed transaction's mutations, in order (empty transactions excluded).
  package var commits: [[StoreMutation]] { guarded.withLock { $0.commits } }

  /// Makes the next write transaction fail with this error, changing nothing, as a full disk
  /// would. Queued: call it twice to fail two commits.
  /// - Parameter error: the error to throw.
  package func failNextCommit(
    _ error: StoreError = StoreError(.io, "Injected failure: the in-memory disk is full.")
  ) {
    guarded.withLock { $0.failures.append(error) }
  }

  /// Runs a read.
  /// - Parameter body: the read.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws.
  public func read<T: Sendable>(_ body: (any LocalStoreReader) throws -> T) throws -> T {
    let snapshot = guarded.withLock { $0.state }
    return try body(snapshot)
  }

  /// Runs a write transaction, all or nothing.
  /// - Parameter body: reads and plans.
  /// - Returns: the plan's result.
  /// - Throws: what `body` throws, an injected failure, or a mutation's `StoreError`.
  public func write<T: Sendable>(_ body: (any LocalStoreReader) throws -> StorePlan<T>) throws
    -> T
  {
    try guarded.withLock { guarded throws -> T in
      let plan = try body(guarded.state)
      if !guarded.failures.isEmpty { throw guarded.failures.removeFirst() }
      try guarded.state.apply(plan.mutations)
      if !plan.mutations.isEmpty { guarded.commits.append(plan.mutations) }
      return plan.result
    }
  }
}

/// The in-memory store seen as an outbox (the same class: records and outbox live together).
package typealias InMemoryOutbox = InMemoryLocalStore
