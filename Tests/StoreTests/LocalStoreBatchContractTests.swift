import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Testing

/// `LocalStore.recordAttempts` and `completeAll` (a replay window's two commits, decision 1204)
/// on every adapter: one transaction each, the same effect as the single calls.
@Suite("LocalStore contract: batches")
struct LocalStoreBatchContractTests {
  typealias F = Fixture

  @Test(
    "a window's attempts in one commit; an entry gone meanwhile is left out",
    arguments: StoreAdapter.all)
  func attempts(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let ops = (0..<4).map { F.operation("r\($0)", .create, "T\($0)") }
      for op in ops { try store.enqueue(op) }
      let read = try store.pending()
      // Meanwhile r1's entry is discarded and r3's is attempted by someone else.
      try store.revert(F.key("r1"))
      try store.recordAttempt(ops[3].id)
      var gone = read[0]
      gone.operation.id = UUID()  // an entry coalesced away: its id is no longer stored
      let before = (store as? InMemoryLocalStore)?.commits.count
      let counted = try store.recordAttempts([read[0], read[1], gone, read[2], read[3]])
      #expect(counted.map(\.id) == [ops[0].id, ops[2].id, ops[3].id])
      #expect(counted.map(\.attempts) == [1, 1, 2], "the stored count, plus one")
      if let memory = store as? InMemoryLocalStore, let before {
        #expect(memory.commits.count == before + 1, "one transaction")
      }
      #expect(try store.pending().map(\.attempts) == [1, 1, 2])
      #expect(
        try store.pending().map(\.operation) == counted.map(\.operation), "the rest as it was")
      // Attempted, they are never coalesced again.
      let later = F.operation("r0", .update, "T0b")
      #expect(try store.enqueue(later) == .appended(try #require(try store.entry(later.id))))
    }
  }

  @Test(
    "a window's completions in one commit: records adopted, later entries rebased",
    arguments: StoreAdapter.all)
  func completions(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let a = F.operation("a", .create, "A")
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A")), a)
      try store.recordAttempt(a.id)
      let aLater = F.operation("a", .create, "A2")
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A2")), aLater)
      let b = F.operation("b", .create, "B")
      try store.applyAndEnqueue(.put(F.key("b"), payload: F.payload("B")), b)
      let held = try store.pending()
      let before = (store as? InMemoryLocalStore)?.commits.count
      let rebases = try store.completeAll([
        OutboxCompletion(entry: held[0], serverRecord: F.server("a", "A", version: 1)),
        OutboxCompletion(entry: held[2], serverRecord: F.server("b", "B", version: 1)),
      ])
      if let memory = store as? InMemoryLocalStore, let before {
        #expect(memory.commits.count == before + 1, "one transaction")
      }
      #expect(
        rebases == [
          OutboxRebase(
            key: F.key("a"), completed: held[0].sequence, fromVersion: nil,
            server: F.server("a", "A", version: 1))
        ], "b's completion moves nothing: b has no other entry")
      #expect(try store.pending().map(\.id) == [aLater.id])
      let moved = try #require(try store.entry(aLater.id))
      #expect(moved.operation.baseVersion == 1)
      #expect(moved.operation.basePayload == F.payload("A"))
      #expect(moved.operation.payload == F.payload("A2"), "its own fields kept")
      #expect(rebases.first?.rebased(held[1]) == moved, "the replay's copy, moved alike")
      #expect(try store.record(F.key("b"))?.state == .synced)
      #expect(try store.record(F.key("a"))?.payload == F.payload("A2"), "the later edit shows")
      #expect(try store.record(F.key("a"))?.version == 1)
    }
  }

  @Test(
    "a batch naming one record twice, a gone entry or another record's reply changes nothing",
    arguments: StoreAdapter.all)
  func refusals(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let a1 = F.operation("a", .create, "A")
      try store.enqueue(a1)
      try store.recordAttempt(a1.id)
      let a2 = F.operation("a", .create, "A2")
      try store.enqueue(a2)
      let b = F.operation("b", .create, "B")
      try store.enqueue(b)
      let snapshot = try store.entries()
      var gone = snapshot[2]
      gone.operation.id = UUID()
      for batch in [
        [
          OutboxCompletion(entry: snapshot[2], serverRecord: nil),
          OutboxCompletion(entry: gone, serverRecord: nil),
        ],
        [
          OutboxCompletion(entry: snapshot[0], serverRecord: nil),
          OutboxCompletion(entry: snapshot[1], serverRecord: nil),
        ],
        [OutboxCompletion(entry: snapshot[2], serverRecord: F.server("a", "A", version: 1))],
      ] {
        #expect(throws: StoreError.self) { try store.completeAll(batch) }
        #expect(try store.entries() == snapshot)
      }
    }
  }
}
