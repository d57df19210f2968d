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
}
