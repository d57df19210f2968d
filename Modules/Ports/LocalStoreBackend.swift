import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What an adapter provides to get every `LocalStore` operation: reads and all-or-nothing
/// commits of `StoreMutation`s. The operations themselves are written once, below, from the
/// pure rules of `LocalStorePlan`, so every adapter behaves the same.
public protocol LocalStoreBackend: LocalStore {
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

extension LocalStoreBackend {
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
  public func record(_ key: RecordKey) throws -> LocalRecord? { try read { try $0.record(key) } }

  /// A collection's records, sorted by id.
  /// - Parameter collection: the collection.
  /// - Returns: the records.
  /// - Throws: `StoreError` when the store cannot be read.
  public func records(in collection: String) throws -> [LocalRecord] {
    try read { try $0.records(in: collection) }
  }

  /// A collection's state.
  /// - Parameter collection: the collection.
  /// - Returns: its state.
  /// - Throws: `StoreError` when the store cannot be read.
  public func collectionState(_ collection: String) throws -> CollectionState {
    try read { try $0.collectionState(collection) }
  }

  /// Applies a full list from the server.
  /// - Parameters:
  ///   - records: the server's records.
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - refreshedAt: when it was received.
  /// - Throws: `StoreError` when it cannot be written.
  public func applyServerList(
    _ records: [ServerRecord], collection: String, etag: String?, refreshedAt: Date
  ) throws {
    try write { reader in
      LocalStorePlan.refresh(
        records, collection: collection, etag: etag, refreshedAt: refreshedAt,
        existing: try reader.records(in: collection))
    }
  }

  /// Records a 304.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - refreshedAt: when it was received.
  /// - Throws: `StoreError` when it cannot be written.
  public func markNotModified(collection: String, refreshedAt: Date) throws {
    try write { reader in
      var state = try reader.collectionState(collection)
      state.lastRefresh = refreshedAt
      return StorePlan([.putCollection(state)], result: ())
    }
  }

  /// Applies news about one record.
  /// - Parameters:
  ///   - record: the server's record, or nil.
  ///   - key: which record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  public func applyServerRecord(_ record: ServerRecord?, key: RecordKey) throws -> LocalRecord? {
    if let record, record.id != key.id {
      throw StoreError(.invalidInput, "The server's record \(record.id) is not \(key).")
    }
    return try write { reader in
      LocalStorePlan.applyServer(record, key: key, record: try reader.record(key))
    }
  }

  /// Enqueues an operation.
  /// - Parameter operation: the operation.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  public func enqueue(_ operation: OutboxOperation) throws -> EnqueueResult {
    try write { reader in
      try LocalStorePlan.applyAndEnqueue(
        change: nil, operation: operation, record: try reader.record(operation.key),
        entries: try reader.entries(for: operation.key), nextSequence: try reader.nextSequence())
    }
  }

  /// Applies a local write and enqueues its operation, atomically.
  /// - Parameters:
  ///   - change: the write.
  ///   - operation: the operation.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError`; nothing changed then.
  @discardableResult
  public func applyAndEnqueue(_ change: RecordChange, _ operation: OutboxOperation) throws
    -> EnqueueResult
  {
    try write { reader in
      try LocalStorePlan.applyAndEnqueue(
        change: change, operation: operation, record: try reader.record(operation.key),
        entries: try reader.entries(for: operation.key), nextSequence: try reader.nextSequence())
    }
  }

  /// The pending entries, in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func pending() throws -> [OutboxEntry] { try read { try $0.entries(pendingOnly: true) } }

  /// Every entry, in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func entries() throws -> [OutboxEntry] { try read { try $0.entries(pendingOnly: false) } }

  /// One collection's entries, in queue order, read by the adapter's own query.
  /// - Parameter collection: the collection.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func entries(in collection: String) throws -> [OutboxEntry] {
    try read { try $0.entries(in: collection) }
  }

  /// Looks an outbox entry up by its operation id.
  /// - Parameter id: its operation id.
  /// - Returns: it, or nil.
  /// - Throws: `StoreError` when the store cannot be read.
  public func entry(_ id: UUID) throws -> OutboxEntry? { try read { try $0.entry(id) } }

  /// Counts entries by state.
  /// - Returns: the counts.
  /// - Throws: `StoreError` when the store cannot be read.
  public func counts() throws -> OutboxCounts { try read { try $0.counts() } }

  /// Counts a send attempt.
  /// - Parameter id: the operation id.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  public func recordAttempt(_ id: UUID) throws -> OutboxEntry {
    try write { LocalStorePlan.recordAttempt(try Self.existing($0, id)) }
  }

  /// Counts a send attempt of several entries the caller read, in one transaction: their stamps
  /// are read (not the rows), and only the count is written.
  /// - Parameter entries: the entries, as read.
  /// - Returns: the entries counted, in the order given; those no longer there are left out.
  /// - Throws: `StoreError` when it cannot be written; nothing is counted then.
  @discardableResult
  public func recordAttempts(_ entries: [OutboxEntry]) throws -> [OutboxEntry] {
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

  /// Completes several entries the caller read, each of another record, in one transaction:
  /// each entry is checked by its stamp and its record is read; the record's other entries are
  /// not read, only whether one remains, and those the completion moves are moved in place
  /// (`StoreMutation.rebaseEntries`).
  /// - Parameter completions: the entries and the server's records.
  /// - Returns: the rebases made, one per completion that moves its record's other entries.
  /// - Throws: `StoreError.notFound` when an entry is gone, `invalidInput` for two completions
  ///   of one record or a server record of another; nothing changed then.
  @discardableResult
  public func completeAll(_ completions: [OutboxCompletion]) throws -> [OutboxRebase] {
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

  /// Removes an entry.
  /// - Parameter id: the operation id.
  /// - Throws: `StoreError.notFound` when absent.
  public func remove(_ id: UUID) throws {
    try write { reader in
      StorePlan([.deleteEntry(sequence: try Self.existing(reader, id).sequence)], result: ())
    }
  }

  /// Marks an entry rejected.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - message: the server's message.
  ///   - code: the server's code.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  public func markRejected(_ id: UUID, message: String, code: String?) throws -> OutboxEntry {
    try write {
      LocalStorePlan.setState(try Self.existing($0, id), .rejected(message: message, code: code))
    }
  }

  /// Marks an entry conflicted.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's record.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  public func markConflicted(_ id: UUID, serverRecord: JSONValue) throws -> OutboxEntry {
    try write {
      LocalStorePlan.setState(try Self.existing($0, id), .conflicted(serverRecord: serverRecord))
    }
  }

  /// Puts an entry back in the queue.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - baseVersion: a new base version, or nil to keep it.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  public func markPending(_ id: UUID, baseVersion: Int?) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      return LocalStorePlan.requeue(
        entry, as: nil, baseVersion: baseVersion, record: try reader.record(entry.key))
    }
  }

  /// Completes an entry.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's record after it.
  /// - Returns: the record after.
  /// - Throws: `StoreError.notFound` when absent.
  @discardableResult
  public func complete(_ id: UUID, serverRecord: ServerRecord?) throws -> LocalRecord? {
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

  /// Puts an entry back in the queue under a new operation id.
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - newID: the new operation id.
  ///   - baseVersion: a new base version, or nil to keep it.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when absent, `duplicate` when `newID` is taken.
  @discardableResult
  public func requeue(_ id: UUID, as newID: UUID, baseVersion: Int?) throws -> OutboxEntry {
    try write { reader in
      let entry = try Self.existing(reader, id)
      return LocalStorePlan.requeue(
        entry, as: newID, baseVersion: baseVersion, record: try reader.record(entry.key))
    }
  }

  /// Puts a conflicted write back in the queue with merged fields on top of the server's
  /// record (`LocalStorePlan.rebase`).
  /// - Parameters:
  ///   - id: the operation id.
  ///   - payload: the merged fields.
  ///   - server: the server's current record.
  /// - Returns: the entry after.
  /// - Throws: `StoreError.notFound` when absent, `invalidInput` when `server` is another record.
  @discardableResult
  public func rebase(_ id: UUID, payload: JSONValue, onto server: ServerRecord) throws
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

  /// Rolls back a record's local changes.
  /// - Parameter key: the record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  public func revert(_ key: RecordKey) throws -> LocalRecord? {
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
