import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// Every operation on a local store, written once over its two primitives from the domain's
// pure plans (`LocalStorePlan`), so that every adapter behaves the same (the contract suite
// passes for the SQLite, file and in-memory stores). Package: the façades and the replayer
// call them; a user hands a store to them and calls none.
extension LocalStore {
  private static func existing(_ reader: any LocalStoreReader, _ id: UUID) throws -> OutboxEntry {
    guard let entry = try reader.entry(id) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(id).")
    }
    return entry
  }

  /// Looks a record up by collection and id.
  /// - Parameter key: which.
  /// - Returns: it, or nil.
  /// - Throws: `StoreError` when the store cannot be read.
  package func record(_ key: RecordKey) throws -> LocalRecord? { try read { try $0.record(key) } }

  /// A collection's records, local tombstones included, sorted by id.
  /// - Parameter collection: the collection.
  /// - Returns: the records.
  /// - Throws: `StoreError` when the store cannot be read.
  package func records(in collection: String) throws -> [LocalRecord] {
    try read { try $0.records(in: collection) }
  }

  /// A collection's `ETag` and last refresh time.
  /// - Parameter collection: the collection.
  /// - Returns: its state, empty when never refreshed.
  /// - Throws: `StoreError` when the store cannot be read.
  package func collectionState(_ collection: String) throws -> CollectionState {
    try read { try $0.collectionState(collection) }
  }

  /// Applies a full list from the server (a 200 to `GET /<collection>`), with its `ETag`:
  /// records without local changes follow the server, records with local changes keep them
  /// and update the server's copy kept alongside. One transaction.
  /// - Parameters:
  ///   - records: the server's records.
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - refreshedAt: when it was received.
  ///   - keeping: ids the list holds but whose records could not be read: left as they are.
  /// - Throws: `StoreError` when it cannot be written; nothing changed then.
  package func applyServerList(
    _ records: [ServerRecord], collection: String, etag: String?, refreshedAt: Date,
    keeping: Set<String> = []
  ) throws {
    try write { reader in
      LocalStorePlan.refresh(
        records, collection: collection, etag: etag, refreshedAt: refreshedAt,
        existing: try reader.records(in: collection), keeping: keeping)
    }
  }

  /// Records that the list did not change (a 304): the refresh time moves, the `ETag` stays.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - refreshedAt: when the 304 was received.
  /// - Throws: `StoreError` when it cannot be written.
  package func markNotModified(collection: String, refreshedAt: Date) throws {
    try write { reader in
      var state = try reader.collectionState(collection)
      state.lastRefresh = refreshedAt
      return StorePlan([.putCollection(state)], result: ())
    }
  }

  /// Applies news about one record: its current copy, or nil when the server answered 404.
  /// - Parameters:
  ///   - record: the server's record, or nil.
  ///   - key: which record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  package func applyServerRecord(_ record: ServerRecord?, key: RecordKey) throws -> LocalRecord? {
    if let record, record.id != key.id {
      throw StoreError(.invalidInput, "The server's record \(record.id) is not \(key).")
    }
    return try write { reader in
      LocalStorePlan.applyServer(record, key: key, record: try reader.record(key))
    }
  }

  /// Adds an operation at the end of the queue, or folds it into the record's last unsent
  /// entry (see `OutboxCoalescing`). Durable when it returns.
  /// - Parameter operation: the operation.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError.duplicate` when the operation id is already queued; `StoreError`
  ///   when it cannot be written. Nothing changed then.
  @discardableResult
  package func enqueue(_ operation: OutboxOperation) throws -> EnqueueResult {
    try write { reader in
      try LocalStorePlan.applyAndEnqueue(
        change: nil, operation: operation, record: try reader.record(operation.key),
        entries: try reader.entries(for: operation.key), nextSequence: try reader.nextSequence())
    }
  }

  /// Applies an optimistic local write and enqueues its operation, atomically (the enqueue
  /// may coalesce, see `enqueue`).
  /// - Parameters:
  ///   - change: the local write.
  ///   - operation: the operation that sends it; on the same record.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError` (`invalidInput` when the two name different records, `duplicate`
  ///   when the operation id is already queued, or an I/O failure); nothing changed then.
  @discardableResult
  package func applyAndEnqueue(_ change: RecordChange, _ operation: OutboxOperation) throws
    -> EnqueueResult
  {
    try write { reader in
      try LocalStorePlan.applyAndEnqueue(
        change: change, operation: operation, record: try reader.record(operation.key),
        entries: try reader.entries(for: operation.key), nextSequence: try reader.nextSequence())
    }
  }

  /// Waits until a write transaction another connection (another process) has begun ends, by
  /// running an empty one: a read after this sees that write. A change to the store's files is
  /// noticed when the write begins, before its commit is visible to readers.
  /// - Throws: `StoreError` when the store cannot be written (or stays busy).
  package func waitForWriters() throws {
    try write { _ in StorePlan([], result: ()) }
  }

  /// The pending entries, in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  package func pending() throws -> [OutboxEntry] { try read { try $0.entries(pendingOnly: true) } }

  /// Every entry (pending, rejected, conflicted), in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  package func entries() throws -> [OutboxEntry] { try read { try $0.entries(pendingOnly: false) } }

  /// One collection's entries (pending, rejected, conflicted), in queue order: what a view of
  /// one kind of write (the queued uploads) reads without decoding every other entry.
  /// - Parameter collection: the collection.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  package func entries(in collection: String) throws -> [OutboxEntry] {
    try read { try $0.entries(in: collection) }
  }

  /// Looks an outbox entry up by its operation id.
  /// - Parameter id: its operation id.
  /// - Returns: the entry, or nil.
  /// - Throws: `StoreError` when the store cannot be read.
  package func entry(_ id: UUID) throws -> OutboxEntry? { try read { try $0.entry(id) } }

  /// How many entries there are, by state.
  /// - Returns: the counts.
  /// - Throws: `StoreError` when the store cannot be read.
  package func counts() throws -> OutboxCounts { try read { try $0.counts() } }

  /// Counts a send attempt. Call it before the request leaves: from then on the entry is
  /// never coalesced.
  /// - Parameter id: the operation id.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id (it was coalesced away).
  @discardableResult
  package func recordAttempt(_ id: UUID) throws -> OutboxEntry {
    try write { LocalStorePlan.recordAttempt(try Self.existing($0, id)) }
  }

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
  package func recordAttempts(_ entries: [OutboxEntry]) throws -> [OutboxEntry] {
    try write { reader in
      let stamps = try reader.stamps(of: entries.map(\.id))
      var mutations: [StoreMutation] = []
      var counted: [OutboxEntry] = []
      for entry in entries {
        guard let stamp = stamps[entry.id], stamp.sequence == entry.sequence, stamp.isPending
        else { continue }
        var updated = entry
        updated.attempts = stamp.attempts + 1
        mutations.append(
          .setAttempts(sequence: entry.sequence, operationID: entry.id, attempts: updated.attempts))
        counted.append(updated)
      }
      return StorePlan(mutations, result: counted)
    }
  }

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
  package func completeAll(_ completions: [OutboxCompletion]) throws -> [OutboxRebase] {
    try write { reader in
      let stamps = try reader.stamps(of: completions.map(\.id))
      var mutations: [StoreMutation] = []
      var rebases: [OutboxRebase] = []
      var seen = Set<RecordKey>()
      for completion in completions {
        let entry = completion.entry
        guard let stamp = stamps[entry.id], stamp.sequence == entry.sequence else {
          throw StoreError(.notFound, "No outbox entry has operation id \(entry.id).")
        }
        guard seen.insert(entry.key).inserted else {
          throw StoreError(.invalidInput, "Two completions in one batch are of \(entry.key).")
        }
        if let server = completion.serverRecord, server.id != entry.key.id {
          throw StoreError(.invalidInput, "The server's record \(server.id) is not \(entry.key).")
        }
        let plan = LocalStorePlan.complete(
          entry, serverRecord: completion.serverRecord, record: try reader.record(entry.key),
          othersRemain: try reader.hasEntries(for: entry.key, except: entry.sequence))
        for mutation in plan.mutations {
          if case .rebaseEntries(let rebase) = mutation { rebases.append(rebase) }
        }
        mutations += plan.mutations
      }
      return StorePlan(mutations, result: rebases)
    }
  }

  /// Removes an entry (sent, or given up).
  /// - Parameter id: the operation id.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  package func remove(_ id: UUID) throws {
    try write { reader in
      StorePlan([.deleteEntry(sequence: try Self.existing(reader, id).sequence)], result: ())
    }
  }

  /// Marks an entry refused by the server for a business reason.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - message: the server's message for a person.
  ///   - code: the server's code.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  package func markRejected(_ id: UUID, message: String, code: String?) throws -> OutboxEntry {
    try write {
      LocalStorePlan.setState(try Self.existing($0, id), .rejected(message: message, code: code))
    }
  }

  /// Marks an entry in conflict with the server's record.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's current record, as it sent it.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  package func markConflicted(_ id: UUID, serverRecord: JSONValue) throws -> OutboxEntry {
    try write {
      LocalStorePlan.setState(try Self.existing($0, id), .conflicted(serverRecord: serverRecord))
    }
  }

  /// Puts a rejected or conflicted entry back in the queue, at its place, optionally with a
  /// new base version (after the user resolved a conflict).
  /// - Parameters:
  ///   - id: the operation id.
  ///   - baseVersion: the new base version, or nil to keep it.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  package func markPending(_ id: UUID, baseVersion: Int?) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      return LocalStorePlan.requeue(
        entry, as: nil, baseVersion: baseVersion, record: try reader.record(entry.key))
    }
  }

  /// Removes an entry the server applied and adopts the server's record, atomically: the
  /// record becomes synced when nothing else waits for it, and later pending entries of the
  /// record are rebased on the new version.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's record after it (nil for a delete).
  /// - Returns: the local record after.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  package func complete(_ id: UUID, serverRecord: ServerRecord?) throws -> LocalRecord? {
    try write { reader in
      let entry = try Self.existing(reader, id)
      if let serverRecord, serverRecord.id != entry.key.id {
        throw StoreError(
          .invalidInput, "The server's record \(serverRecord.id) is not \(entry.key).")
      }
      return LocalStorePlan.complete(
        entry, serverRecord: serverRecord, record: try reader.record(entry.key),
        entries: try reader.entries(for: entry.key))
    }
  }

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
  package func requeue(_ id: UUID, as newID: UUID, baseVersion: Int?) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      return LocalStorePlan.requeue(
        entry, as: newID, baseVersion: baseVersion, record: try reader.record(entry.key))
    }
  }

  /// Puts a conflicted write back in the queue with merged fields on top of the server's
  /// record, atomically (`LocalStorePlan.rebase`: the entry, later entries of the record, the
  /// record and its server copy). Its place in the queue and its attempt count are kept.
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - payload: the merged fields.
  ///   - server: the server's current record, the write's new base.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when no entry has `id`, `invalidInput` when `server` is
  ///   another record.
  @discardableResult
  package func rebase(_ id: UUID, payload: JSONValue, onto server: ServerRecord) throws
    -> OutboxEntry
  {
    try write { reader in
      let entry = try Self.existing(reader, id)
      guard server.id == entry.key.id else {
        throw StoreError(.invalidInput, "The server's record \(server.id) is not \(entry.key).")
      }
      return LocalStorePlan.rebase(
        entry, payload: payload, onto: server, record: try reader.record(entry.key),
        entries: try reader.entries(for: entry.key))
    }
  }

  /// Rolls back every local change to a record: removes its entries, whatever their state,
  /// and restores the server's copy (or removes the record if the server never had it).
  /// - Parameter key: the record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  package func revert(_ key: RecordKey) throws -> LocalRecord? {
    try write { reader in
      LocalStorePlan.revert(
        key, record: try reader.record(key), entries: try reader.entries(for: key))
    }
  }

  // An edit or a delete against a record deleted on the server, and parked writes (decision
  // 2401): each one transaction, from `LocalStorePlan`'s rules.

  /// Marks an entry parked: its replies proved nothing after its bounded attempts while the
  /// server answered. It keeps its operation id (the server may hold the write).
  /// - Parameters:
  ///   - id: the operation id.
  ///   - reason: why, for a person.
  ///   - code: the reply's shortfall, if any.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  package func markParked(_ id: UUID, reason: String, code: String?) throws -> OutboxEntry {
    try write {
      LocalStorePlan.setState(try Self.existing($0, id), .parked(reason: reason, code: code))
    }
  }

  /// Sends a write again as a create, under a new operation id (`LocalStorePlan.recreate`).
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - newID: the operation id it is sent under from now on.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when absent, `duplicate` when `newID` is taken.
  @discardableResult
  package func recreate(_ id: UUID, as newID: UUID) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      return LocalStorePlan.recreate(
        entry, as: newID, record: try reader.record(entry.key),
        entries: try reader.entries(for: entry.key))
    }
  }

  /// Takes the server's deletion of a record: its entries and the record go
  /// (`LocalStorePlan.takeGone`).
  /// - Parameter key: the record.
  /// - Throws: `StoreError` when it cannot be written.
  package func takeGone(_ key: RecordKey) throws {
    try write { reader in
      LocalStorePlan.takeGone(
        key, record: try reader.record(key), entries: try reader.entries(for: key))
    }
  }

  /// Turns an entry into a delete of the record the server re-created from it, under a new
  /// operation id (`LocalStorePlan.deleteAgain`).
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - newID: the delete's operation id.
  ///   - server: the re-created record.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when absent, `invalidInput` when `server` is another record.
  @discardableResult
  package func deleteAgain(_ id: UUID, as newID: UUID, onto server: ServerRecord) throws
    -> OutboxEntry
  {
    try write { reader in
      let entry = try Self.existing(reader, id)
      guard server.id == entry.key.id else {
        throw StoreError(.invalidInput, "The server's record \(server.id) is not \(entry.key).")
      }
      return LocalStorePlan.deleteAgain(
        entry, as: newID, onto: server, entries: try reader.entries(for: entry.key))
    }
  }

  /// Keeps an edit against a deletion for the user (`LocalStorePlan.keepGone`).
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - server: the record the server re-created from the entry, if it did.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when absent, `invalidInput` when `server` is another record.
  @discardableResult
  package func keepGone(_ id: UUID, adopting server: ServerRecord?) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      if let server, server.id != entry.key.id {
        throw StoreError(.invalidInput, "The server's record \(server.id) is not \(entry.key).")
      }
      return LocalStorePlan.keepGone(entry, adopting: server, record: try reader.record(entry.key))
    }
  }
}
