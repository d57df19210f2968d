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
    let rebased = plan.mutations.compactMap { mutation -> OutboxEntry? in
      if case .replaceEntry(let entry) = mutation { return entry }
      return nil
    }
    #expect(rebased.map(\.operation.baseVersion) == [5])
    #expect(rebased.map(\.operation.basePayload) == [.string("L1")])
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
