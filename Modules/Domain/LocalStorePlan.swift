#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The local store's rules as pure functions: given the rows an operation touches, the
/// mutations it makes. Every adapter commits these plans, so they all behave the same.
package enum LocalStorePlan {
  /// The record as it stands after an optimistic local write. The server's copy is kept
  /// untouched alongside, so the write can be rolled back.
  /// - Parameters:
  ///   - change: the write.
  ///   - record: the record before, if any.
  /// - Returns: the record after.
  package static func applying(_ change: RecordChange, to record: LocalRecord?) -> LocalRecord {
    let server = record?.server
    switch change {
    case .put(let key, let payload):
      return LocalRecord(
        key: key, payload: payload, state: .pending(payload: payload, server: server),
        server: server)
    case .delete(let key):
      return LocalRecord(key: key, payload: nil, state: .deleted, server: server)
    }
  }

  /// What a record shows once no local change is left: the server's copy, or nothing.
  /// - Parameter record: the record.
  /// - Returns: the restored record, or nil when the server never had it.
  package static func restored(_ record: LocalRecord?) -> LocalRecord? {
    guard let record, let server = record.server else { return nil }
    return .synced(server, collection: record.key.collection)
  }

  /// Applies an optimistic write (optional) and enqueues its operation, coalescing with the
  /// record's last unsent entry (see `OutboxCoalescing`). An update or a delete without a base
  /// copy gets the record's server copy as its `basePayload` when that copy is at the
  /// operation's base version: the exact fields the write started from, kept for a merge.
  /// - Parameters:
  ///   - change: the local write, or nil to enqueue only.
  ///   - operation: the operation to send.
  ///   - record: the record before.
  ///   - entries: the record's outbox entries, in queue order.
  ///   - nextSequence: the sequence number a new entry gets.
  /// - Returns: record mutations first, then outbox mutations; the enqueue result.
  /// - Throws: `StoreError.invalidInput` when the change and the operation name two records.
  package static func applyAndEnqueue(
    change: RecordChange?, operation: OutboxOperation, record: LocalRecord?,
    entries: [OutboxEntry], nextSequence: Int64
  ) throws(StoreError) -> StorePlan<EnqueueResult> {
    if let change, change.key != operation.key {
      throw StoreError(
        .invalidInput,
        "The local change is on \(change.key) but the operation is on \(operation.key).")
    }
    var operation = operation
    if operation.basePayload == nil, let base = operation.baseVersion,
      let server = record?.server, server.version == base
    {
      operation.basePayload = server.payload
    }
    var after: LocalRecord? = change.map { applying($0, to: record) }
    var outbox: [StoreMutation] = []
    let result: EnqueueResult
    let decision =
      entries.last.map { OutboxCoalescing.decide(earlier: $0, later: operation) } ?? .append
    switch (decision, entries.last) {
    case (.merge(let merged), let last?):
      let entry = OutboxEntry(sequence: last.sequence, operation: merged)
      outbox.append(.replaceEntry(entry))
      result = .coalesced(entry)
    case (.dropBoth, let last?):
      outbox.append(.deleteEntry(sequence: last.sequence))
      result = .cancelled(removed: last)
      if change != nil, entries.count == 1 { after = restored(record) }
    default:
      let entry = OutboxEntry(sequence: nextSequence, operation: operation)
      outbox.append(.insertEntry(entry))
      result = .appended(entry)
    }
    var mutations: [StoreMutation] = []
    if change != nil {
      if let after {
        mutations.append(.putRecord(after))
      } else if record != nil {
        mutations.append(.deleteRecord(operation.key))
      }
    }
    return StorePlan(mutations + outbox, result: result)
  }

  /// Counts a send attempt, before the request leaves: from then on the entry is never
  /// coalesced, since the server may have seen its `Idempotency-Key`.
  /// - Parameter entry: the entry.
  /// - Returns: the plan, returning the updated entry.
  package static func recordAttempt(_ entry: OutboxEntry) -> StorePlan<OutboxEntry> {
    var updated = entry
    updated.attempts += 1
    return StorePlan([.replaceEntry(updated)], result: updated)
  }

  /// Changes an entry's state (rejected, conflicted, or back to pending).
  /// - Parameters:
  ///   - entry: the entry.
  ///   - state: the new state.
  /// - Returns: the plan, returning the updated entry.
  package static func setState(_ entry: OutboxEntry, _ state: OutboxEntryState)
    -> StorePlan<OutboxEntry>
  {
    var updated = entry
    updated.state = state
    return StorePlan([.replaceEntry(updated)], result: updated)
  }

  /// Removes an entry the server applied and adopts the server's record: the record becomes
  /// synced when no other entry waits for it; later pending entries of the record that were
  /// based on the same version are rebased on the new one, with the server's record as their
  /// base copy (they were made on top of this change, which the server now holds).
  /// - Parameters:
  ///   - entry: the entry done.
  ///   - serverRecord: the server's record after it (nil for a delete, or when not returned).
  ///   - record: the local record.
  ///   - entries: the record's entries, in queue order, `entry` included.
  /// - Returns: the plan, returning the record after; its rebase is left out when it moves
  ///   none of `entries`.
  package static func complete(
    _ entry: OutboxEntry, serverRecord: ServerRecord?, record: LocalRecord?,
    entries: [OutboxEntry]
  ) -> StorePlan<LocalRecord?> {
    let remaining = entries.filter { $0.sequence != entry.sequence }
    let plan = complete(
      entry, serverRecord: serverRecord, record: record, othersRemain: !remaining.isEmpty)
    let mutations = plan.mutations.filter { mutation in
      guard case .rebaseEntries(let rebase) = mutation else { return true }
      return remaining.contains { rebase.rebased($0) != nil }
    }
    return StorePlan(mutations, result: plan.result)
  }

  /// `complete` without the record's other entries read: whether any remains is enough, and
  /// the record's later entries move with one `rebaseEntries` (`OutboxRebase`), which the
  /// store applies in place (a replay's window of completions, `LocalStore.completeAll`).
  /// - Parameters:
  ///   - entry: the entry done.
  ///   - serverRecord: the server's record after it (nil for a delete, or when not returned).
  ///   - record: the local record.
  ///   - othersRemain: whether the record has other entries than `entry`, whatever their state.
  /// - Returns: the plan, returning the record after.
  package static func complete(
    _ entry: OutboxEntry, serverRecord: ServerRecord?, record: LocalRecord?, othersRemain: Bool
  ) -> StorePlan<LocalRecord?> {
    var mutations: [StoreMutation] = [.deleteEntry(sequence: entry.sequence)]
    let isDelete = entry.operation.kind == .delete
    var server = record?.server
    if isDelete {
      server = nil
    } else if let serverRecord {
      server = serverRecord
    }
    if othersRemain, let rebase = OutboxRebase(completing: entry, serverRecord: serverRecord) {
      mutations.append(.rebaseEntries(rebase))
    }
    let key = entry.key
    var after: LocalRecord?
    if !othersRemain {
      if let server {
        after = .synced(server, collection: key.collection)
        if serverRecord == nil, let payload = record?.payload {
          after?.payload = payload
        }
      }
    } else if var kept = record {
      kept.server = server
      if kept.hasLocalChanges { kept.state = .pending(payload: kept.payload, server: server) }
      after = kept
    }
    if let after {
      mutations.append(.putRecord(after))
    } else if record != nil {
      mutations.append(.deleteRecord(key))
    }
    return StorePlan(mutations, result: after)
  }

  /// Puts a conflicted write back in the queue with merged fields on top of the server's
  /// record (`ConflictPolicy.merge`): the entry carries `payload` and is based on the server's
  /// version; the server's record becomes the record's server copy; later pending entries of
  /// the record based on the same version are rebased too and get the server's side of the
  /// merge for the fields they did not change themselves; the record shows the result.
  /// - Parameters:
  ///   - entry: the conflicted entry.
  ///   - payload: the merged fields.
  ///   - server: the server's current record.
  ///   - record: the local record.
  ///   - entries: the record's entries, in queue order, `entry` included.
  /// - Returns: the plan, returning the entry after.
  package static func rebase(
    _ entry: OutboxEntry, payload: JSONValue, onto server: ServerRecord, record: LocalRecord?,
    entries: [OutboxEntry]
  ) -> StorePlan<OutboxEntry> {
    let before = entry.operation.payload
    let oldBase = entry.operation.baseVersion
    var updated = entry
    updated.operation.payload = payload
    updated.operation = updated.operation.rebased(onto: server.version, payload: server.payload)
    updated.state = .pending
    var mutations: [StoreMutation] = [.replaceEntry(updated)]
    // A later write keeps what it changed over this one; the merge fills in the rest.
    func carried(_ later: JSONValue?) -> JSONValue? {
      guard let later else { return nil }
      if case .merged(let fields) = ThreeWayMerge.merge(
        base: before, mine: later, theirs: payload, resolve: ThreeWayMerge.localWins)
      {
        return fields
      }
      return later
    }
    for other in entries where other.sequence > entry.sequence && other.state.isPending {
      var rebased = other
      if other.operation.baseVersion == oldBase {
        rebased.operation = other.operation.rebased(onto: server.version, payload: server.payload)
      }
      rebased.operation.payload = carried(other.operation.payload)
      if rebased != other { mutations.append(.replaceEntry(rebased)) }
    }
    let key = entry.key
    let shown = record.map { carried($0.payload) } ?? payload
    mutations.append(
      .putRecord(
        LocalRecord(
          key: key, payload: shown, state: .pending(payload: shown, server: server),
          server: server)))
    return StorePlan(mutations, result: updated)
  }

  /// Puts an entry back in the queue (pending), optionally under a new operation id and on a
  /// new base version; a new base takes the record's server copy as its base copy when that copy
  /// is at the new version (after a conflict the record holds the server's record), else the
  /// copy is dropped rather than kept for the wrong version.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - newID: its new operation id, or nil to keep it.
  ///   - baseVersion: its new base version, or nil to keep it.
  ///   - record: the local record.
  /// - Returns: the plan, returning the entry after.
  package static func requeue(
    _ entry: OutboxEntry, as newID: UUID?, baseVersion: Int?, record: LocalRecord?
  ) -> StorePlan<OutboxEntry> {
    var updated = entry
    if let newID { updated.operation.id = newID }
    if let baseVersion,
      baseVersion != entry.operation.baseVersion || entry.operation.basePayload == nil
    {
      let copy = record?.server.flatMap { $0.version == baseVersion ? $0.payload : nil }
      updated.operation = updated.operation.rebased(onto: baseVersion, payload: copy)
    }
    return setState(updated, .pending)
  }

  /// Drops every local change to a record: removes all its outbox entries (whatever their
  /// state) and restores the server's copy (or removes the record when the server never had
  /// it). The rollback of a refused optimistic write.
  /// - Parameters:
  ///   - key: the record.
  ///   - record: the local record.
  ///   - entries: its entries.
  /// - Returns: the plan, returning the record after.
  package static func revert(_ key: RecordKey, record: LocalRecord?, entries: [OutboxEntry])
    -> StorePlan<LocalRecord?>
  {
    var mutations = entries.map { StoreMutation.deleteEntry(sequence: $0.sequence) }
    let after = restored(record)
    if let after {
      mutations.append(.putRecord(after))
    } else if record != nil {
      mutations.append(.deleteRecord(key))
    }
    return StorePlan(mutations, result: after)
  }

  /// A record after news from the server: a record without local changes follows the server
  /// (and disappears with it); a record with local changes keeps them and only updates the
  /// server's copy kept alongside.
  /// - Parameters:
  ///   - server: the server's record, or nil when the server no longer has it.
  ///   - record: the local record.
  ///   - key: the record's key.
  /// - Returns: the record after, or nil when it is gone.
  package static func merging(server: ServerRecord?, into record: LocalRecord?, key: RecordKey)
    -> LocalRecord?
  {
    guard var record, record.hasLocalChanges else {
      return server.map { .synced($0, collection: key.collection) }
    }
    record.server = server
    record.state = .pending(payload: record.payload, server: server)
    return record
  }

  /// Applies news about one record from the server.
  /// - Parameters:
  ///   - server: the record, or nil when the server answered that it does not exist.
  ///   - key: the record's key.
  ///   - record: the local record.
  /// - Returns: the plan, returning the record after.
  package static func applyServer(_ server: ServerRecord?, key: RecordKey, record: LocalRecord?)
    -> StorePlan<LocalRecord?>
  {
    let after = merging(server: server, into: record, key: key)
    if after == record { return StorePlan([], result: after) }
    if let after { return StorePlan([.putRecord(after)], result: after) }
    return StorePlan([.deleteRecord(key)], result: nil)
  }

  /// Applies a full list of a collection from the server: records follow it (see `merging`),
  /// records it no longer lists are dropped unless they hold local changes, and the list's
  /// `ETag` and refresh time are saved.
  /// - Parameters:
  ///   - list: the server's records.
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - refreshedAt: when it was received.
  ///   - existing: the collection's local records.
  ///   - keeping: ids the list holds but that could not be read (a field nested past the
  ///     parser's limit): their local records are left exactly as they are, neither replaced
  ///     nor dropped.
  /// - Returns: the plan.
  package static func refresh(
    _ list: [ServerRecord], collection: String, etag: String?, refreshedAt: Date,
    existing: [LocalRecord], keeping: Set<String> = []
  ) -> StorePlan<Void> {
    var local: [String: LocalRecord] = [:]
    for record in existing { local[record.key.id] = record }
    var mutations: [StoreMutation] = []
    var seen = keeping
    for server in list where seen.insert(server.id).inserted {
      let key = RecordKey(collection: collection, id: server.id)
      mutations += applyServer(server, key: key, record: local[server.id]).mutations
    }
    for record in existing where !seen.contains(record.key.id) {
      mutations += applyServer(nil, key: record.key, record: record).mutations
    }
    mutations.append(
      .putCollection(
        CollectionState(collection: collection, etag: etag, lastRefresh: refreshedAt)))
    return StorePlan(mutations, result: ())
  }
}

// An edit or a delete against a record deleted on the server, settled (decision 2401).
extension LocalStorePlan {
  /// Sends a write again as a create (last write wins against a deletion): the entry gets a new
  /// operation id and no base version (a create cannot replace a record that exists), the
  /// record loses its server copy, and the record's later pending entries on the same base move
  /// off it, to be rebased on the version the create makes.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - newID: its new operation id.
  ///   - record: the local record.
  ///   - entries: the record's entries, in queue order, `entry` included.
  /// - Returns: the plan, returning the entry after.
  package static func recreate(
    _ entry: OutboxEntry, as newID: UUID, record: LocalRecord?, entries: [OutboxEntry]
  ) -> StorePlan<OutboxEntry> {
    var updated = entry
    updated.operation.id = newID
    updated.operation.kind = entry.operation.kind == .delete ? .delete : .create
    updated.operation.baseVersion = nil
    updated.operation.basePayload = nil
    updated.state = .pending
    var mutations: [StoreMutation] = [.replaceEntry(updated)]
    for other in entries
    where other.sequence > entry.sequence && other.state.isPending
      && other.operation.baseVersion == entry.operation.baseVersion
    {
      var moved = other
      moved.operation.baseVersion = nil
      moved.operation.basePayload = nil
      mutations.append(.replaceEntry(moved))
    }
    mutations += following(server: nil, record: record, key: entry.key)
    return StorePlan(mutations, result: updated)
  }

  /// Takes the server's deletion (server wins against a deletion): every entry of the record
  /// goes, and the record.
  /// - Parameters:
  ///   - key: the record.
  ///   - record: the local record.
  ///   - entries: its entries.
  /// - Returns: the plan.
  package static func takeGone(_ key: RecordKey, record: LocalRecord?, entries: [OutboxEntry])
    -> StorePlan<Void>
  {
    var mutations = entries.map { StoreMutation.deleteEntry(sequence: $0.sequence) }
    if record != nil { mutations.append(.deleteRecord(key)) }
    return StorePlan(mutations, result: ())
  }

  /// Deletes again a record the server re-created from a write that a deletion had overtaken
  /// (server wins): the entry becomes a delete of the re-created version under a new operation
  /// id, the record's other entries go, and the record shows as deleted with the re-creation as
  /// its server copy.
  /// - Parameters:
  ///   - entry: the entry the server re-created the record from.
  ///   - newID: the delete's operation id.
  ///   - server: the re-created record.
  ///   - entries: the record's entries, in queue order, `entry` included.
  /// - Returns: the plan, returning the entry after.
  package static func deleteAgain(
    _ entry: OutboxEntry, as newID: UUID, onto server: ServerRecord, entries: [OutboxEntry]
  ) -> StorePlan<OutboxEntry> {
    var updated = entry
    updated.operation.id = newID
    updated.operation.kind = .delete
    updated.operation.payload = nil
    updated.operation = updated.operation.rebased(onto: server.version, payload: server.payload)
    updated.state = .pending
    var mutations: [StoreMutation] = [.replaceEntry(updated)]
    for other in entries where other.sequence != entry.sequence {
      mutations.append(.deleteEntry(sequence: other.sequence))
    }
    mutations.append(
      .putRecord(LocalRecord(key: entry.key, payload: nil, state: .deleted, server: server)))
    return StorePlan(mutations, result: updated)
  }

  /// Keeps an edit against a deletion for the user: the entry is conflicted with `.null` (the
  /// server shows no record), and the record's server copy becomes the server's re-creation
  /// from this write, or none; its local changes stay.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - server: the record the server re-created from the entry, if it did.
  ///   - record: the local record.
  /// - Returns: the plan, returning the entry after.
  package static func keepGone(
    _ entry: OutboxEntry, adopting server: ServerRecord?, record: LocalRecord?
  ) -> StorePlan<OutboxEntry> {
    var updated = entry
    updated.state = .conflicted(serverRecord: .null)
    let mutations =
      [.replaceEntry(updated)] + following(server: server, record: record, key: entry.key)
    return StorePlan(mutations, result: updated)
  }

  /// The mutation that makes a record follow news from the server (`merging`), if any.
  private static func following(server: ServerRecord?, record: LocalRecord?, key: RecordKey)
    -> [StoreMutation]
  {
    let after = merging(server: server, into: record, key: key)
    guard after != record else { return [] }
    return [after.map(StoreMutation.putRecord) ?? .deleteRecord(key)]
  }
}
