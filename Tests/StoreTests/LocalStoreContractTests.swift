import CourierDomain
import CourierPorts
import CourierSystem
import Foundation
import Testing

/// Opens a fresh store of an adapter in a temporary directory, runs `body`, then cleans up.
func withStore(
  _ adapter: StoreAdapter, _ body: (any LocalStore, TemporaryDirectory) throws -> Void
) throws {
  let directory = try TemporaryDirectory()
  defer { directory.remove() }
  let store = try adapter.open(directory.path)
  defer { adapter.close(store) }
  try body(store, directory)
}

/// The behaviour every `LocalStore` adapter must have: run against in-memory, SQLite and files.
@Suite("LocalStore contract")
struct LocalStoreContractTests {
  typealias F = Fixture

  @Test(
    "server list: records are stored, read back sorted, replaced and dropped",
    arguments: StoreAdapter.all)
  func serverListCRUD(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      #expect(try store.records(in: F.collection).isEmpty)
      try store.applyServerList(
        [F.server("b", "B", version: 1), F.server("a", "A", version: 3)],
        collection: F.collection, etag: "\"list-1\"", refreshedAt: F.epoch)
      let records = try store.records(in: F.collection)
      #expect(records.map(\.key.id) == ["a", "b"])
      #expect(records.allSatisfy { $0.state == .synced })
      #expect(
        try store.record(F.key("a"))
          == .synced(F.server("a", "A", version: 3), collection: F.collection))
      #expect(try store.records(in: "other").isEmpty)

      try store.applyServerList(
        [F.server("a", "A2", version: 4)], collection: F.collection, etag: "\"list-2\"",
        refreshedAt: F.epoch.addingTimeInterval(10))
      #expect(try store.records(in: F.collection).map(\.key.id) == ["a"])
      #expect(try store.record(F.key("a"))?.payload == F.payload("A2"))
      #expect(try store.record(F.key("a"))?.version == 4)
      #expect(try store.record(F.key("b")) == nil)
    }
  }

  @Test(
    "ETag and last refresh per collection; a 304 moves the time only", arguments: StoreAdapter.all)
  func etagAndRefresh(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      #expect(try store.collectionState(F.collection) == CollectionState(collection: F.collection))
      try store.applyServerList([], collection: F.collection, etag: "W/\"7\"", refreshedAt: F.epoch)
      try store.markNotModified(
        collection: F.collection, refreshedAt: F.epoch.addingTimeInterval(5))
      let state = try store.collectionState(F.collection)
      #expect(state.etag == "W/\"7\"")
      #expect(state.lastRefresh == F.epoch.addingTimeInterval(5))
      #expect(try store.collectionState("photos").etag == nil)
    }
  }

  @Test("one server record: created, updated, removed on 404", arguments: StoreAdapter.all)
  func singleServerRecord(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
      #expect(try store.record(F.key("a"))?.version == 1)
      try store.applyServerRecord(F.server("a", "A", version: 2), key: F.key("a"))
      #expect(try store.record(F.key("a"))?.version == 2)
      #expect(try store.applyServerRecord(nil, key: F.key("a")) == nil)
      #expect(try store.record(F.key("a")) == nil)
      #expect(throws: StoreError.self) {
        try store.applyServerRecord(F.server("x", "X", version: 1), key: F.key("a"))
      }
    }
  }

  @Test(
    "a refresh keeps local edits and updates the server copy beside them",
    arguments: StoreAdapter.all)
  func refreshKeepsLocalEdits(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerList(
        [F.server("a", "A", version: 1), F.server("b", "B", version: 1)],
        collection: F.collection, etag: nil, refreshedAt: F.epoch)
      try store.applyAndEnqueue(
        .put(F.key("a"), payload: F.payload("mine")), F.operation("a", .update, "mine", base: 1))
      try store.applyAndEnqueue(
        .put(F.key("new"), payload: F.payload("N")), F.operation("new", .create, "N"))
      try store.applyServerList(
        [F.server("a", "theirs", version: 2)], collection: F.collection, etag: nil,
        refreshedAt: F.epoch)
      let a = try #require(try store.record(F.key("a")))
      #expect(a.payload == F.payload("mine"))
      #expect(a.state == .modified)
      #expect(a.server == F.server("a", "theirs", version: 2))
      #expect(try store.record(F.key("b")) == nil)
      #expect(try store.record(F.key("new"))?.state == .created)
    }
  }

  @Test("the outbox is FIFO with increasing sequence numbers", arguments: StoreAdapter.all)
  func fifo(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      var ids: [UUID] = []
      for n in 0..<30 {
        let op = F.operation("r\(n % 7)", .delete, base: n, operationID: F.operationID(n))
        // Deletes never coalesce with deletes, so every one is appended.
        let result = try store.enqueue(op)
        #expect(result.entry?.id == op.id)
        ids.append(op.id)
      }
      let pending = try store.pending()
      #expect(pending.map(\.id) == ids)
      #expect(zip(pending, pending.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
      #expect(try store.counts() == OutboxCounts(pending: 30))
      try store.remove(ids[0])
      try store.remove(ids[5])
      #expect(try store.pending().map(\.id) == Array(ids.dropFirst().filter { $0 != ids[5] }))
      #expect(try store.counts().total == 28)
      #expect(throws: StoreError.self) { try store.remove(ids[0]) }
    }
  }

  @Test(
    "one collection's entries: only its own, every state, in queue order",
    arguments: StoreAdapter.all)
  func entriesOfOneCollection(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let uploads = { (id: String) in
        OutboxOperation(
          key: RecordKey(collection: "uploads", id: id), kind: .create,
          payload: .object(["n": .string(id)]), baseVersion: nil, enqueuedAt: F.epoch)
      }
      try store.enqueue(F.operation("a", .create, "A"))
      try store.enqueue(uploads("u1"))
      try store.enqueue(F.operation("b", .create, "B"))
      let refused = try store.enqueue(uploads("u2"))
      try store.enqueue(uploads("u3"))
      try store.markRejected(try #require(refused.entry).id, message: "no", code: "bad")
      let listed = try store.entries(in: "uploads")
      #expect(listed.map(\.key.id) == ["u1", "u2", "u3"])
      #expect(listed.map(\.sequence) == listed.map(\.sequence).sorted())
      #expect(listed[1].state == .rejected(message: "no", code: "bad"))
      #expect(try store.entries(in: F.collection).map(\.key.id) == ["a", "b"])
      #expect(try store.entries(in: "notes").isEmpty)
      // The same as filtering every entry.
      #expect(listed == (try store.entries().filter { $0.key.collection == "uploads" }))
    }
  }

  @Test(
    "a requeue under a new operation id keeps the place; a rebase keeps the id",
    arguments: StoreAdapter.all)
  func replacedEntriesKeepTheirPlace(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.enqueue(F.operation("a", .create, "A"))
      let refused = try #require(try store.enqueue(F.operation("b", .update, "B", base: 1)).entry)
      try store.enqueue(F.operation("c", .create, "C"))
      try store.markRejected(refused.id, message: "no", code: nil)
      // A new id (the SQLite adapter's second statement): same sequence, the old id gone.
      let newID = F.operationID(77)
      let requeued = try store.requeue(refused.id, as: newID, baseVersion: 2)
      #expect(requeued.sequence == refused.sequence && requeued.id == newID)
      #expect(try store.entry(refused.id) == nil)
      #expect(try store.entry(newID)?.operation.baseVersion == 2)
      #expect(try store.entries().map(\.key.id) == ["a", "b", "c"])
      // The same id (a state change only: the first statement).
      let again = try store.markPending(newID, baseVersion: 3)
      #expect(again.id == newID && again.sequence == refused.sequence)
      #expect(try store.entry(newID)?.operation.baseVersion == 3)
      #expect(try store.entries(in: F.collection).map(\.id).contains(newID))
    }
  }

  @Test(
    "apply and enqueue writes the optimistic record and the entry together",
    arguments: StoreAdapter.all)
  func applyAndEnqueue(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerRecord(F.server("a", "A", version: 4), key: F.key("a"))
      let op = F.operation("a", .update, "edited", base: 4)
      let result = try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("edited")), op)
      guard case .appended(let entry) = result else {
        Issue.record("expected appended, got \(result)")
        return
      }
      // The operation as given, with the server copy it started from as its base copy.
      var expected = op
      expected.basePayload = F.payload("A")
      #expect(entry.operation == expected)
      #expect(entry.state == .pending && entry.attempts == 0)
      let record = try #require(try store.record(F.key("a")))
      #expect(record.payload == F.payload("edited"))
      #expect(record.state == .modified)
      #expect(record.server == F.server("a", "A", version: 4))
      #expect(try store.entry(op.id) == entry)

      try store.applyAndEnqueue(.delete(F.key("b")), F.operation("b", .delete, base: 2))
      #expect(try store.record(F.key("b"))?.isDeleted == true)
      #expect(try store.record(F.key("b"))?.state == .deleted)
    }
  }

  @Test("a failure inside apply-and-enqueue applies neither half", arguments: StoreAdapter.all)
  func atomicity(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let first = F.operation("a", .create, "A", operationID: F.operationID(1))
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A")), first)
      // Same operation id on another record: the record write comes first in the
      // transaction, then the outbox insert violates the unique operation id.
      let clash = F.operation("b", .create, "B", operationID: F.operationID(1))
      #expect {
        try store.applyAndEnqueue(.put(F.key("b"), payload: F.payload("B")), clash)
      } throws: { error in
        (error as? StoreError)?.code == .duplicate
      }
      #expect(try store.record(F.key("b")) == nil)
      #expect(try store.entries().map(\.id) == [first.id])
      // A change and an operation on two records are refused before anything is written.
      #expect(throws: StoreError.self) {
        try store.applyAndEnqueue(
          .put(F.key("c"), payload: F.payload("C")), F.operation("d", .create, "C"))
      }
      #expect(try store.record(F.key("c")) == nil)
      #expect(try store.counts().total == 1)
    }
  }

  @Test("unsent operations on one record coalesce", arguments: StoreAdapter.all)
  func coalescing(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      // create + update → one create with the new payload.
      let create = F.operation("a", .create, "A1")
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), create)
      let other = try store.enqueue(F.operation("z", .delete, base: 1))
      let update = F.operation("a", .update, "A2", at: 5)
      let merged = try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A2")), update)
      guard case .coalesced(let entry) = merged else {
        Issue.record("expected coalesced, got \(merged)")
        return
      }
      #expect(entry.operation.kind == .create)
      #expect(entry.operation.payload == F.payload("A2"))
      #expect(entry.operation.id == update.id)
      #expect(entry.operation.enqueuedAt == create.enqueuedAt)
      #expect(try store.pending().map(\.id) == [update.id, other.entry?.id])
      #expect(try store.record(F.key("a"))?.state == .created)

      // create + delete never sent → nothing at all.
      let gone = try store.applyAndEnqueue(.delete(F.key("a")), F.operation("a", .delete))
      guard case .cancelled = gone else {
        Issue.record("expected cancelled, got \(gone)")
        return
      }
      #expect(try store.record(F.key("a")) == nil)
      #expect(try store.pending().map(\.key.id) == ["z"])

      // update + update → one update with the first base; update + delete → delete, same base.
      try store.applyServerRecord(F.server("b", "B", version: 7), key: F.key("b"))
      try store.applyAndEnqueue(
        .put(F.key("b"), payload: F.payload("B1")), F.operation("b", .update, "B1", base: 7))
      try store.applyAndEnqueue(
        .put(F.key("b"), payload: F.payload("B2")), F.operation("b", .update, "B2", base: 8))
      var forB = try store.pending().filter { $0.key.id == "b" }
      #expect(forB.count == 1)
      #expect(forB.first?.operation.baseVersion == 7)
      #expect(forB.first?.operation.payload == F.payload("B2"))
      try store.applyAndEnqueue(.delete(F.key("b")), F.operation("b", .delete, base: 9))
      forB = try store.pending().filter { $0.key.id == "b" }
      #expect(forB.map(\.operation.kind) == [.delete])
      #expect(forB.first?.operation.baseVersion == 7)
      #expect(try store.record(F.key("b"))?.state == .deleted)
    }
  }

  @Test("an entry handed to the network is never coalesced", arguments: StoreAdapter.all)
  func noCoalescingAfterAttempt(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let first = F.operation("a", .update, "A1", base: 1)
      try store.enqueue(first)
      let attempted = try store.recordAttempt(first.id)
      #expect(attempted.attempts == 1)
      #expect(try store.recordAttempt(first.id).attempts == 2)
      let second = try store.enqueue(F.operation("a", .update, "A2", base: 1))
      guard case .appended = second else {
        Issue.record("expected appended, got \(second)")
        return
      }
      #expect(try store.pending().count == 2)
      #expect(throws: StoreError.self) { try store.recordAttempt(UUID()) }
    }
  }

  @Test(
    "rejected and conflicted entries keep their reason and leave the pending list",
    arguments: StoreAdapter.all)
  func rejectedAndConflicted(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let a = F.operation("a", .update, "A", base: 1)
      let b = F.operation("b", .update, "B", base: 1)
      let c = F.operation("c", .update, "C", base: 1)
      for op in [a, b, c] { try store.enqueue(op) }
      try store.markRejected(a.id, message: "Title is too long.", code: "validation_failed")
      let current: JSONValue = .object(["id": .string("b"), "version": .number(5)])
      try store.markConflicted(b.id, serverRecord: current)
      #expect(
        try store.entry(a.id)?.state
          == .rejected(message: "Title is too long.", code: "validation_failed"))
      #expect(try store.entry(b.id)?.state == .conflicted(serverRecord: current))
      #expect(try store.pending().map(\.id) == [c.id])
      #expect(try store.entries().map(\.id) == [a.id, b.id, c.id])
      #expect(try store.counts() == OutboxCounts(pending: 1, rejected: 1, conflicted: 1))
      // A later edit of a rejected record is appended, not folded into the rejected entry.
      let again = try store.enqueue(F.operation("a", .update, "A'", base: 1))
      #expect(again.entry?.sequence ?? 0 > (try store.entry(c.id)?.sequence ?? .max))
      // After resolution the conflicted entry goes back to its place with a new base.
      let resolved = try store.markPending(b.id, baseVersion: 5)
      #expect(resolved.operation.baseVersion == 5)
      #expect(try store.pending().map(\.id).prefix(2) == [b.id, c.id])
      #expect(throws: StoreError.self) { try store.markRejected(UUID(), message: "x", code: nil) }
    }
  }

  @Test(
    "completing adopts the server's record and rebases later edits", arguments: StoreAdapter.all)
  func complete(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
      let first = F.operation("a", .update, "A1", base: 1)
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), first)
      try store.recordAttempt(first.id)
      let second = F.operation("a", .update, "A2", base: 1)
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A2")), second)

      let afterFirst = try store.complete(first.id, serverRecord: F.server("a", "A1", version: 2))
      #expect(afterFirst?.payload == F.payload("A2"))
      #expect(afterFirst?.state == .modified)
      #expect(afterFirst?.version == 2)
      #expect(try store.entry(second.id)?.operation.baseVersion == 2)

      let afterSecond = try store.complete(second.id, serverRecord: F.server("a", "A2", version: 3))
      #expect(afterSecond == .synced(F.server("a", "A2", version: 3), collection: F.collection))
      #expect(try store.record(F.key("a")) == afterSecond)
      #expect(try store.counts().total == 0)

      // A confirmed delete removes the record.
      let delete = F.operation("a", .delete, base: 3)
      try store.applyAndEnqueue(.delete(F.key("a")), delete)
      #expect(try store.complete(delete.id, serverRecord: nil) == nil)
      #expect(try store.record(F.key("a")) == nil)
      #expect(throws: StoreError.self) { try store.complete(delete.id, serverRecord: nil) }
    }
  }

  @Test("revert rolls a refused edit back to the server's copy", arguments: StoreAdapter.all)
  func revert(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      try store.applyServerRecord(F.server("a", "A", version: 3), key: F.key("a"))
      let edit = F.operation("a", .update, "", base: 3)
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("")), edit)
      try store.recordAttempt(edit.id)
      try store.markRejected(
        edit.id, message: "The title cannot be empty.", code: "validation_failed")
      #expect(try store.record(F.key("a"))?.payload == F.payload(""))

      let restored = try store.revert(F.key("a"))
      #expect(restored == .synced(F.server("a", "A", version: 3), collection: F.collection))
      #expect(try store.record(F.key("a")) == restored)
      #expect(try store.counts().total == 0)

      // A record the server never had disappears.
      try store.applyAndEnqueue(
        .put(F.key("n"), payload: F.payload("N")), F.operation("n", .create, "N"))
      #expect(try store.revert(F.key("n")) == nil)
      #expect(try store.record(F.key("n")) == nil)
    }
  }

  @Test("concurrent writers lose nothing and share one sequence", arguments: StoreAdapter.all)
  func concurrentWriters(adapter: StoreAdapter) async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try adapter.open(directory.path)
    defer { adapter.close(store) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<4 {
        group.addTask {
          for n in 0..<15 {
            let id = "w\(writer)-\(n)"
            try store.applyAndEnqueue(
              .put(F.key(id), payload: F.payload(id)), F.operation(id, .create, id))
          }
        }
      }
      try await group.waitForAll()
    }
    let entries = try store.entries()
    #expect(entries.count == 60)
    #expect(Set(entries.map(\.sequence)).count == 60)
    #expect(try store.records(in: F.collection).count == 60)
    // Each writer's own operations stay in the order it made them.
    for writer in 0..<4 {
      let mine = entries.map(\.key.id).filter { $0.hasPrefix("w\(writer)-") }
      #expect(mine == (0..<15).map { "w\(writer)-\($0)" })
    }
  }

  @Test("the Article view reads and writes the backend's fields", arguments: StoreAdapter.all)
  func articleConvenience(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let json: JSONValue = .object([
        "id": .string("6c1f"), "title": .string("Hello"), "body": .string("World"),
        "version": .number(2), "updated_at": .string("2026-11-30T10:15:00.123Z"),
      ])
      let server = try RecordSchema.standard.serverRecord(from: json)
      try store.applyServerList(
        [server], collection: Article.collection, etag: nil, refreshedAt: F.epoch)
      var article = try Article(record: try #require(try store.record(server.key)))
      #expect(article.title == "Hello" && article.version == 2)
      #expect(article.updatedAt == RFC3339.date(from: "2026-11-30T10:15:00.123Z"))
      article.title = "Hello again"
      try store.applyAndEnqueue(
        .put(article.key, payload: article.payload),
        OutboxOperation(
          key: article.key, kind: .update, payload: article.payload,
          baseVersion: article.version, enqueuedAt: F.epoch))
      #expect(
        try Article(record: try #require(try store.record(article.key))).title == "Hello again")
    }
  }
}

extension ServerRecord {
  /// This record's key in the fixture collection.
  fileprivate var key: RecordKey { RecordKey(collection: Fixture.collection, id: id) }
}
