import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a session's records and outbox live, written together: an optimistic local write and
/// the operation that sends it commit in one transaction, both or neither (a crash between the
/// two would show an edit that is never sent, or send one the user no longer sees). Calls are
/// synchronous and durable: when one returns, its change is on disk.
///
/// A store is one of Courier's adapters (`SQLiteLocalStore`, `FileLocalStore`,
/// `InMemoryLocalStore`), handed to a ``SyncEngine`` or chosen by the configuration. Each
/// implements two primitives, a read of a consistent view and an all-or-nothing commit of a
/// plan; every operation on records and the outbox is written once over them, so every adapter
/// behaves the same.
public protocol LocalStore: Sendable {
  /// Runs a read against a consistent view of the store.
  /// - Parameter body: the read.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws, or `StoreError` when the store cannot be read.
  func read<T: Sendable>(_ body: (any LocalStoreReader) throws -> T) throws -> T

  /// Runs a write transaction: `body` reads and returns a plan; the plan's mutations are
  /// committed durably, all or nothing, before this returns. No other write interleaves.
  /// - Parameter body: reads and plans.
  /// - Returns: the plan's result.
  /// - Throws: what `body` throws, or `StoreError` when the commit fails; nothing changed then.
  func write<T: Sendable>(_ body: (any LocalStoreReader) throws -> StorePlan<T>) throws -> T
}

extension LocalStoreState: LocalStoreReader {
  /// Every entry, in queue order.
  /// - Parameter pendingOnly: whether to list pending entries only.
  /// - Returns: the entries.
  package func entries(pendingOnly: Bool) -> [OutboxEntry] {
    let all = orderedEntries()
    return pendingOnly ? all.filter { $0.state.isPending } : all
  }

  /// The sequence number the next appended entry gets.
  /// - Returns: it.
  package func nextSequence() -> Int64 { nextSequence }
}
