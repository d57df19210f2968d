import CourierDomain
import CourierPorts
import Foundation
import Testing

/// `LocalStore.rebase` (the merge policy's re-send) on every adapter: one transaction over the
/// entry, the record's later entries and the record.
@Suite("LocalStore contract: rebase")
struct LocalStoreRebaseContractTests {
  typealias F = Fixture

  @Test(
    "a merged re-send replaces the fields and the base, keeps its place, rebases later edits",
    arguments: StoreAdapter.all)
  func rebase(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
      let first = F.operation("a", .update, "A1", base: 1)
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), first)
      try store.recordAttempt(first.id)
      let other = F.operation("b", .create, "B")
      try store.enqueue(other)
      // A later edit of the same record, on top of the first: it changed the body.
      let second = F.operation("a", .update, base: 1)
      let secondFields = F.payload("A1", body: "mine")
      var secondOperation = second
      secondOperation.payload = secondFields
      try store.applyAndEnqueue(.put(F.key("a"), payload: secondFields), secondOperation)
      try store.markConflicted(first.id, serverRecord: .null)

      let server = ServerRecord(
        id: "a", payload: .object(["title": .string("A"), "body": .string("theirs")]),
        version: 4)
      let merged = F.payload("A1", body: "theirs")
      let after = try store.rebase(first.id, payload: merged, onto: server)
      #expect(after.id == first.id && after.state == .pending && after.attempts == 1)
      #expect(after.operation.payload == merged && after.operation.baseVersion == 4)
      #expect(try store.entry(first.id) == after)
      let pendingIDs = try store.pending().map(\.id)
      #expect(pendingIDs == [first.id, other.id, second.id])
      let later = try #require(try store.entry(second.id))
      #expect(later.operation.baseVersion == 4)
      #expect(later.operation.payload == secondFields, "its own body change is kept")
      let record = try #require(try store.record(F.key("a")))
      #expect(record.server == server && record.payload == secondFields)
      #expect(record.state == .modified)

      #expect(throws: StoreError.self) {
        try store.rebase(UUID(), payload: merged, onto: server)
      }
      #expect(throws: StoreError.self) {
        try store.rebase(other.id, payload: merged, onto: server)
      }
    }
  }
}
