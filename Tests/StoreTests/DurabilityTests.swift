import CourierDomain
import CourierPorts
import Foundation
import Testing

/// What a durable adapter keeps across a close and a reopen of the same files.
@Suite("LocalStore durability")
struct DurabilityTests {
  typealias F = Fixture

  /// Writes a bit of everything: records synced, edited, created and deleted; entries
  /// pending, attempted, rejected and conflicted; a collection state.
  static func populate(_ store: any LocalStore) throws -> [UUID] {
    try store.applyServerList(
      [
        F.server("a", "A", version: 1), F.server("b", "B", version: 2),
        F.server("c", "C", version: 3),
      ],
      collection: F.collection, etag: "\"e1\"", refreshedAt: F.epoch)
    let ops = [
      F.operation("a", .update, "A'", base: 1, operationID: F.operationID(1)),
      F.operation("b", .delete, base: 2, operationID: F.operationID(2)),
      F.operation("n", .create, "N", operationID: F.operationID(3)),
      F.operation("c", .update, "C'", base: 3, operationID: F.operationID(4)),
    ]
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A'")), ops[0])
    try store.applyAndEnqueue(.delete(F.key("b")), ops[1])
    try store.applyAndEnqueue(.put(F.key("n"), payload: F.payload("N")), ops[2])
    try store.applyAndEnqueue(.put(F.key("c"), payload: F.payload("C'")), ops[3])
    try store.recordAttempt(ops[2].id)
    try store.markRejected(ops[0].id, message: "Nope — «unicode» kept.", code: "validation_failed")
    try store.markConflicted(ops[3].id, serverRecord: .object(["version": .number(9)]))
    return ops.map(\.id)
  }

  struct Dump: Equatable {
    var records: [LocalRecord]
    var entries: [OutboxEntry]
    var collection: CollectionState
    var counts: OutboxCounts
  }

  static func dump(_ store: any LocalStore) throws -> Dump {
    Dump(
      records: try store.records(in: F.collection), entries: try store.entries(),
      collection: try store.collectionState(F.collection), counts: try store.counts())
  }

  @Test("reopening the same files finds everything, in order", arguments: StoreAdapter.durableOnes)
  func reopenKeepsEverything(adapter: StoreAdapter) throws {
    let (before, after) = try Self.acrossReopen(adapter) { _ = try Self.populate($0) }
    #expect(before.records.count == 4 && before.entries.count == 4)
    #expect(after == before)
  }

  /// Writes with `body` in a fresh folder, closes the store and opens the same files again.
  /// - Returns: the store's dump before the close, and the reopened store's.
  static func acrossReopen(_ adapter: StoreAdapter, _ body: (any LocalStore) throws -> Void)
    throws -> (before: Dump, after: Dump)
  {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try adapter.open(directory.path)
    try body(store)
    let before = try dump(store)
    adapter.close(store)
    let reopened = try adapter.open(directory.path)
    defer { adapter.close(reopened) }
    return (before, try dump(reopened))
  }

  @Test(
    "a window's completions and the rebases they make are found after a reopen",
    arguments: StoreAdapter.durableOnes)
  func rebasesSurviveReopen(adapter: StoreAdapter) throws {
    let (before, after) = try Self.acrossReopen(adapter) { store in
      try store.applyServerList(
        [F.server("a", "A", version: 1), F.server("b", "B", version: 4)],
        collection: F.collection, etag: nil, refreshedAt: F.epoch)
      // Three edits of a on version 1 (each attempted, so none coalesces), one of b.
      for (index, title) in ["A1", "A2", "A3"].enumerated() {
        let op = F.operation("a", .update, title, base: 1, operationID: F.operationID(10 + index))
        try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload(title)), op)
        try store.recordAttempt(op.id)
      }
      let b = F.operation("b", .update, "B1", base: 4, operationID: F.operationID(20))
      try store.applyAndEnqueue(.put(F.key("b"), payload: F.payload("B1")), b)
      let held = try store.pending()
      try store.completeAll([
        OutboxCompletion(entry: held[0], serverRecord: F.server("a", "A1", version: 2)),
        OutboxCompletion(entry: held[3], serverRecord: F.server("b", "B1", version: 5)),
      ])
    }
    #expect(before.entries.map(\.operation.baseVersion) == [2, 2])
    #expect(before.entries.map(\.operation.basePayload) == [F.payload("A1"), F.payload("A1")])
    #expect(after == before)
  }

  @Test(
    "sequence numbers are never reused, even after the queue empties and a reopen",
    arguments: StoreAdapter.durableOnes)
  func sequenceSurvives(adapter: StoreAdapter) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try adapter.open(directory.path)
    var last: Int64 = 0
    for n in 0..<5 {
      let entry = try store.enqueue(F.operation("x\(n)", .delete, base: 1)).entry
      last = entry?.sequence ?? 0
      try store.remove(try #require(entry).id)
    }
    adapter.close(store)
    let reopened = try adapter.open(directory.path)
    defer { adapter.close(reopened) }
    let next = try reopened.enqueue(F.operation("y", .delete, base: 1)).entry?.sequence ?? 0
    #expect(next > last)
  }

  @Test(
    "the number of the newest entry, removed while older ones wait, is not given again",
    arguments: StoreAdapter.durableOnes)
  func newestRemovedNotReused(adapter: StoreAdapter) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try adapter.open(directory.path)
    let entries = try (0..<3).map { n in
      try #require(try store.enqueue(F.operation("r\(n)", .delete, base: 1)).entry)
    }
    try store.remove(entries[2].id)
    #expect(
      try store.enqueue(F.operation("s", .delete, base: 1)).entry?.sequence ?? 0
        > entries[2].sequence)
    adapter.close(store)
    let reopened = try adapter.open(directory.path)
    defer { adapter.close(reopened) }
    let waiting = try reopened.entries().map(\.sequence)
    #expect(waiting.count == 3 && waiting.allSatisfy { $0 != entries[2].sequence })
    let next = try reopened.enqueue(F.operation("t", .delete, base: 1)).entry?.sequence ?? 0
    #expect(next > waiting.max() ?? 0)
  }

  @Test(
    "the same history gives the same state in every adapter", arguments: StoreAdapter.durableOnes)
  func sameAsInMemory(adapter: StoreAdapter) throws {
    let reference = try StoreAdapter.inMemory.open("")
    _ = try Self.populate(reference)
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try adapter.open(directory.path)
    defer { adapter.close(store) }
    _ = try Self.populate(store)
    #expect(try Self.dump(store) == Self.dump(reference))
  }
}
