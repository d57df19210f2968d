import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record store and an outbox kept in one place, so an optimistic local write and the
/// operation that sends it are committed together: both or neither. A crash between the two
/// would otherwise show an edit that is never sent, or send an edit the user no longer sees.
public protocol LocalStore: RecordStore, Outbox {
  /// Applies an optimistic local write and enqueues its operation, atomically (the enqueue
  /// may coalesce, see `Outbox.enqueue`).
  /// - Parameters:
  ///   - change: the local write.
  ///   - operation: the operation that sends it; on the same record.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError` (`invalidInput` when the two name different records, `duplicate`
  ///   when the operation id is already queued, or an I/O failure); nothing changed then.
  @discardableResult
  func applyAndEnqueue(_ change: RecordChange, _ operation: OutboxOperation) throws
    -> EnqueueResult

  /// Removes an entry the server applied and adopts the server's record, atomically: the
  /// record becomes synced when nothing else waits for it, and later pending entries of the
  /// record are rebased on the new version.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's record after it (nil for a delete).
  /// - Returns: the local record after.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  func complete(_ id: UUID, serverRecord: ServerRecord?) throws -> LocalRecord?

  /// Rolls back every local change to a record: removes its entries, whatever their state,
  /// and restores the server's copy (or removes the record if the server never had it).
  /// - Parameter key: the record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  func revert(_ key: RecordKey) throws -> LocalRecord?

  /// Puts a refused or conflicted entry back in the queue under a new operation id (a new
  /// `Idempotency-Key`: the server keeps its answer under the old one), optionally on a new
  /// base version, atomically. Its place in the queue and its attempt count are kept.
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - newID: the operation id it is sent under from now on.
  ///   - baseVersion: a new base version, or nil to keep it.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when no entry has `id`, `duplicate` when `newID` is taken.
  @discardableResult
  func requeue(_ id: UUID, as newID: UUID, baseVersion: Int?) throws -> OutboxEntry

  /// Puts a conflicted write back in the queue with merged fields on top of the server's
  /// record, atomically (`LocalStorePlan.rebase`: the entry, later entries of the record, the
  /// record and its server copy). Its place in the queue and its attempt count are kept.
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - payload: the merged fields.
  ///   - server: the server's current record, the write's new base.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when no entry has `id`; `StoreError.unusable` from a
  ///   store that does not implement it (the default).
  @discardableResult
  func rebase(_ id: UUID, payload: JSONValue, onto server: ServerRecord) throws -> OutboxEntry

  /// Counts a send attempt of several entries the caller read, in one durable transaction (one
  /// commit for a window of sends instead of one each, decision 1204), without decoding them
  /// again. As `recordAttempt`, call it before any of them leaves; an entry counted but then not
  /// sent (the window stopped early) is only never coalesced again.
  /// - Parameter entries: the entries, as read.
  /// - Returns: the entries counted, in the order given, with their new count; one no longer in
  ///   the outbox at its place, or no longer pending (coalesced away, discarded meanwhile), is
  ///   left out.
  /// - Throws: `StoreError` when it cannot be written; nothing is counted then.
  @discardableResult
  func recordAttempts(_ entries: [OutboxEntry]) throws -> [OutboxEntry]

  /// Completes several entries the server applied, each of another record, in one durable
  /// transaction (as `complete` each: the entry removed, the server's record adopted, the
  /// record's later pending entries rebased). Safe to batch: an entry whose completion a crash
  /// loses is sent again under the same `Idempotency-Key`, and the server replays its answer.
  /// - Parameter completions: the entries and the server's records.
  /// - Returns: the rebases the completions made (`OutboxRebase`), for a caller holding the
  ///   records' later entries to apply them (`ReplaySchedule.apply`) instead of reading them.
  /// - Throws: `StoreError.notFound` when an entry is gone, `invalidInput` when two completions
  ///   name one record or a server record is another record; nothing changed then.
  @discardableResult
  func completeAll(_ completions: [OutboxCompletion]) throws -> [OutboxRebase]
}

extension LocalStore {
  /// Refuses: a store outside `LocalStoreBackend` cannot merge a conflicted write (the merge
  /// policy then keeps the conflict for the user).
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - payload: the merged fields.
  ///   - server: the server's current record.
  /// - Returns: never.
  /// - Throws: `StoreError.unusable`.
  @discardableResult
  public func rebase(_ id: UUID, payload: JSONValue, onto server: ServerRecord) throws
    -> OutboxEntry
  {
    throw StoreError(.unusable, "This local store cannot merge a conflicted write.")
  }
}

extension LocalStore {
  /// Counts each attempt in a transaction of its own (a store without batches).
  /// - Parameter entries: the entries.
  /// - Returns: the entries counted; those no longer stored are left out.
  /// - Throws: `StoreError` when one cannot be written (the earlier ones are counted).
  @discardableResult
  public func recordAttempts(_ entries: [OutboxEntry]) throws -> [OutboxEntry] {
    var counted: [OutboxEntry] = []
    for entry in entries {
      do {
        counted.append(try recordAttempt(entry.id))
      } catch let error as StoreError where error.code == .notFound {
        continue
      }
    }
    return counted
  }

  /// Completes each entry in a transaction of its own (a store without batches).
  /// - Parameter completions: the entries and the server's records.
  /// - Returns: the rebases `complete` made, one per completion of a write the server returned.
  /// - Throws: `StoreError` when one cannot be written (the earlier ones are completed).
  @discardableResult
  public func completeAll(_ completions: [OutboxCompletion]) throws -> [OutboxRebase] {
    var rebases: [OutboxRebase] = []
    for completion in completions {
      try complete(completion.id, serverRecord: completion.serverRecord)
      if let rebase = OutboxRebase(
        completing: completion.entry, serverRecord: completion.serverRecord)
      {
        rebases.append(rebase)
      }
    }
    return rebases
  }
}

extension LocalStoreState: LocalStoreReader {
  /// Every entry, in queue order.
  /// - Parameter pendingOnly: whether to list pending entries only.
  /// - Returns: the entries.
  public func entries(pendingOnly: Bool) -> [OutboxEntry] {
    let all = orderedEntries()
    return pendingOnly ? all.filter { $0.state.isPending } : all
  }

  /// The sequence number the next appended entry gets.
  /// - Returns: it.
  public func nextSequence() -> Int64 { nextSequence }
}
