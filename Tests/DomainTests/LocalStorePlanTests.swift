import CourierDomain
import Foundation
import Testing

@Suite("LocalStorePlan")
struct LocalStorePlanTests {
  static let key = RecordKey(collection: "articles", id: "a")
  static let server = ServerRecord(id: "a", payload: .object(["title": .string("S")]), version: 4)

  @Test("a put on a server record is modified and keeps the server copy; on a new one, created")
  func applying() {
    let synced = LocalRecord.synced(Self.server, collection: "articles")
    let edited = LocalStorePlan.applying(.put(Self.key, payload: .string("L")), to: synced)
    #expect(edited.state == .modified && edited.server == Self.server && edited.version == 4)
    #expect(LocalStorePlan.applying(.put(Self.key, payload: .null), to: nil).state == .created)
    let deleted = LocalStorePlan.applying(.delete(Self.key), to: synced)
    #expect(deleted.isDeleted && deleted.state == .deleted && deleted.server == Self.server)
  }

  @Test("record mutations come before outbox mutations, so a failing insert undoes the record")
  func order() throws {
    let operation = OutboxOperation(
      key: Self.key, kind: .create, payload: .null, baseVersion: nil, enqueuedAt: Date())
    let plan = try LocalStorePlan.applyAndEnqueue(
      change: .put(Self.key, payload: .null), operation: operation, record: nil, entries: [],
      nextSequence: 12)
    guard case .putRecord = plan.mutations.first, case .insertEntry(let entry) = plan.mutations.last
    else {
      Issue.record("unexpected plan \(plan.mutations)")
      return
    }
    #expect(entry.sequence == 12)
  }

  @Test("a server refresh merges: clean records follow, dirty ones keep their edit")
  func merging() {
    let dirty = LocalRecord(key: Self.key, payload: .string("L"), state: .modified, server: nil)
    let merged = LocalStorePlan.merging(server: Self.server, into: dirty, key: Self.key)
    #expect(merged?.payload == .string("L") && merged?.server == Self.server)
    #expect(merged?.state == .modified)
    let created = LocalRecord(key: Self.key, payload: .string("L"), state: .created, server: nil)
    #expect(LocalStorePlan.merging(server: nil, into: created, key: Self.key) == created)
    let clean = LocalRecord.synced(Self.server, collection: "articles")
    #expect(LocalStorePlan.merging(server: nil, into: clean, key: Self.key) == nil)
  }

  @Test("the in-memory state undoes a batch whose last mutation fails")
  func atomicApply() {
    var state = LocalStoreState()
    let entry = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: Self.key, kind: .delete, payload: nil, baseVersion: 1, enqueuedAt: Date()))
    #expect(throws: StoreError.self) {
      try state.apply([
        .putRecord(.synced(Self.server, collection: "articles")), .insertEntry(entry),
        .deleteEntry(sequence: 99),
      ])
    }
    #expect(state == LocalStoreState())
  }

  // MARK: The base copy each write started from (decision 1201)

  struct BaseRow: Sendable, CustomTestStringConvertible {
    var name: String
    var kind: OutboxKind
    var baseVersion: Int?
    var record: LocalRecord?
    var expected: JSONValue?
    var testDescription: String { name }
  }

  static let synced = LocalRecord.synced(server, collection: "articles")

  static let baseRows: [BaseRow] = [
    BaseRow(
      name: "an update of a record at the base version keeps its server copy", kind: .update,
      baseVersion: 4, record: synced, expected: server.payload),
    BaseRow(
      name: "a delete keeps it too", kind: .delete, baseVersion: 4, record: synced,
      expected: server.payload),
    BaseRow(
      name: "a copy of another version is not the base: none kept", kind: .update,
      baseVersion: 3, record: synced, expected: nil),
    BaseRow(
      name: "a create has no base copy", kind: .create, baseVersion: nil, record: nil,
      expected: nil),
    BaseRow(
      name: "an update of a record the server never had: none", kind: .update, baseVersion: 4,
      record: LocalRecord(key: key, payload: .string("L"), state: .created, server: nil),
      expected: nil),
  ]

  @Test("a write is enqueued with the server copy it started from", arguments: baseRows)
  func baseCopy(_ row: BaseRow) throws {
    let operation = OutboxOperation(
      key: Self.key, kind: row.kind, payload: row.kind == .delete ? nil : .string("L"),
      baseVersion: row.baseVersion, enqueuedAt: Date())
    let change: RecordChange =
      row.kind == .delete ? .delete(Self.key) : .put(Self.key, payload: .string("L"))
    let plan = try LocalStorePlan.applyAndEnqueue(
      change: change, operation: operation, record: row.record, entries: [], nextSequence: 1)
    #expect(plan.result.entry?.operation.basePayload == row.expected)
  }

  @Test("coalescing keeps the earlier entry's base copy, not the later one's")
  func coalescedBaseCopy() throws {
    let first = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: Self.key, kind: .update, payload: .string("L1"), baseVersion: 4,
        enqueuedAt: Date(), basePayload: .string("P1")))
    let later = OutboxOperation(
      key: Self.key, kind: .update, payload: .string("L2"), baseVersion: 4, enqueuedAt: Date(),
      basePayload: .string("P2"))
    let plan = try LocalStorePlan.applyAndEnqueue(
      change: .put(Self.key, payload: .string("L2")), operation: later, record: Self.synced,
      entries: [first], nextSequence: 2)
    guard case .coalesced(let merged) = plan.result else {
      Issue.record("not coalesced: \(plan.result)")
      return
    }
    #expect(
      merged.operation.basePayload == .string("P1") && merged.operation.payload == .string("L2"))
  }

  @Test("completing an entry rebases the record's later entries with the server's copy as base")
  func completeMovesBaseCopy() {
    let sent = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: Self.key, kind: .update, payload: .string("L1"), baseVersion: 4,
        enqueuedAt: Date(), basePayload: Self.server.payload))
    let waiting = OutboxEntry(
      sequence: 2,
      operation: OutboxOperation(
        key: Self.key, kind: .update, payload: .string("L2"), baseVersion: 4,
        enqueuedAt: Date(), basePayload: Self.server.payload))
    let applied = ServerRecord(id: "a", payload: .string("L1"), version: 5)
    let plan = LocalStorePlan.complete(
      sent, serverRecord: applied, record: Self.synced, entries: [sent, waiting])
    let rebases = plan.mutations.compactMap { mutation -> OutboxRebase? in
      if case .rebaseEntries(let rebase) = mutation { return rebase }
      return nil
    }
    #expect(rebases == [OutboxRebase(key: Self.key, completed: 1, fromVersion: 4, server: applied)])
    let rebased = rebases.first?.rebased(waiting)
    #expect(rebased?.operation.baseVersion == 5)
    #expect(rebased?.operation.basePayload == .string("L1"))
    #expect(rebased?.operation.payload == .string("L2"), "its own fields kept")
    // The same completion with nothing it moves carries no rebase.
    var elsewhere = waiting
    elsewhere.operation.baseVersion = 3
    let none = LocalStorePlan.complete(
      sent, serverRecord: applied, record: Self.synced, entries: [sent, elsewhere])
    #expect(
      !none.mutations.contains { mutation in
        if case .rebaseEntries = mutation { return true }
        return false
      })
  }

  @Test(
    "a rebase moves the record's other pending entries on the completed one's base, no others",
    arguments: [
      // (the entry's record, sequence, base version, state) -> moved
      ("a", Int64(2), 4, OutboxEntryState.pending, true),
      ("a", Int64(1), 4, OutboxEntryState.pending, false),  // the entry completed
      ("b", Int64(2), 4, OutboxEntryState.pending, false),  // another record
      ("a", Int64(2), 3, OutboxEntryState.pending, false),  // another base
      ("a", Int64(2), 4, OutboxEntryState.rejected(message: "no", code: nil), false),
      ("a", Int64(2), 4, OutboxEntryState.conflicted(serverRecord: .null), false),
    ])
  func rebaseTable(
    id: String, sequence: Int64, base: Int, state: OutboxEntryState, moved: Bool
  ) {
    let server = ServerRecord(id: "a", payload: .string("S5"), version: 5)
    let rebase = OutboxRebase(key: Self.key, completed: 1, fromVersion: 4, server: server)
    let entry = OutboxEntry(
      sequence: sequence,
      operation: OutboxOperation(
        key: RecordKey(collection: Self.key.collection, id: id), kind: .update,
        payload: .string("L"), baseVersion: base, enqueuedAt: Date(), basePayload: .string("P")),
      state: state)
    let after = rebase.rebased(entry)
    #expect((after != nil) == moved)
    if let after {
      #expect(after.operation.baseVersion == 5 && after.operation.basePayload == .string("S5"))
      #expect(after.operation.payload == .string("L") && after.state == state)
    }
    // A create's later writes are based on no version: they move from nil, the same way.
    let create = OutboxRebase(key: Self.key, completed: 1, fromVersion: nil, server: server)
    var unversioned = entry
    unversioned.operation.baseVersion = nil
    #expect((create.rebased(unversioned) != nil) == (moved || base != 4))
    #expect(create.rebased(entry) == nil)
  }

  @Test("a completion of a delete, or without the server's record, rebases nothing")
  func noRebase() {
    let entry = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: Self.key, kind: .delete, payload: nil, baseVersion: 4, enqueuedAt: Date()))
    let server = ServerRecord(id: "a", payload: .string("S"), version: 5)
    #expect(OutboxRebase(completing: entry, serverRecord: server) == nil)
    var update = entry
    update.operation.kind = .update
    #expect(OutboxRebase(completing: update, serverRecord: nil) == nil)
    #expect(
      OutboxRebase(completing: update, serverRecord: server)
        == OutboxRebase(key: Self.key, completed: 1, fromVersion: 4, server: server))
  }

  @Test("requeued on a new base: the record's copy of that version, else none")
  func requeueMovesBaseCopy() {
    let conflicted = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: Self.key, kind: .update, payload: .string("L"), baseVersion: 3, enqueuedAt: Date(),
        basePayload: .string("P3")),
      state: .conflicted(serverRecord: .null), attempts: 1)
    let onCopy = LocalStorePlan.requeue(
      conflicted, as: nil, baseVersion: 4, record: Self.synced)
    #expect(onCopy.result.operation.basePayload == Self.server.payload)
    #expect(onCopy.result.operation.baseVersion == 4 && onCopy.result.state == .pending)
    let elsewhere = LocalStorePlan.requeue(
      conflicted, as: UUID(), baseVersion: 9, record: Self.synced)
    #expect(elsewhere.result.operation.basePayload == nil)
    let same = LocalStorePlan.requeue(conflicted, as: nil, baseVersion: nil, record: nil)
    #expect(same.result.operation.basePayload == .string("P3"))
  }
}
