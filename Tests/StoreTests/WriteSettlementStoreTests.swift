import CourierDomain
import CourierFileStore
import CourierPorts
import CourierSQLite
import Foundation
import Testing

/// What decision 2401 asks of every store: a parked entry, and the settlements of an edit
/// against a deletion, each in one transaction; and stores written before it open unchanged.
@Suite("LocalStore, parked writes and edits against deletions")
struct WriteSettlementStoreTests {
  typealias F = Fixture

  /// Record `a` synced at version 1, then edited (`A1`, sent once) and edited again (`A2`).
  static func edited(_ store: any LocalStore) throws -> (OutboxEntry, OutboxEntry) {
    try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
    let first = F.operation("a", .update, "A1", base: 1)
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), first)
    try store.recordAttempt(first.id)
    let second = F.operation("a", .update, "A2", base: 1)
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A2")), second)
    let entries = try store.entries()
    return (entries[0], entries[1])
  }

  @Test(
    "a parked entry keeps its key, is counted apart, not pending, and survives a reopen",
    arguments: StoreAdapter.all)
  func parked(adapter: StoreAdapter) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var store = try adapter.open(directory.path)
    let (first, _) = try Self.edited(store)
    let parked = try store.markParked(
      first.id, reason: "never proved", code: "reply_stale_version")
    #expect(parked.state == .parked(reason: "never proved", code: "reply_stale_version"))
    #expect(parked.id == first.id && parked.attempts == 1)
    var counts = OutboxCounts(pending: 1)
    counts.parked = 1
    #expect(try store.counts() == counts)
    #expect(try store.pending().map(\.sequence) == [2])
    if adapter.durable {
      adapter.close(store)
      store = try adapter.open(directory.path)
    }
    defer { adapter.close(store) }
    #expect(try store.entry(first.id)?.state == parked.state)
    #expect(try store.counts() == counts)
    // A retry puts it back under the same key, at its place, its attempts kept.
    let retried = try store.markPending(first.id, baseVersion: nil)
    #expect(retried.id == first.id && retried.state == .pending && retried.attempts == 1)
    #expect(try store.pending().map(\.sequence) == [1, 2])
  }

  @Test(
    "last write wins against a deletion: the entry becomes a create, its record loses its copy",
    arguments: StoreAdapter.all)
  func recreate(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let (first, second) = try Self.edited(store)
      let newID = F.operationID(9)
      let after = try store.recreate(first.id, as: newID)
      #expect(after.id == newID && after.sequence == first.sequence)
      #expect(after.operation.kind == .create && after.operation.baseVersion == nil)
      #expect(after.operation.basePayload == nil && after.operation.payload == F.payload("A1"))
      #expect(after.state == .pending && after.attempts == 1)
      // The later edit moves off the deleted version: it is rebased when the create completes.
      let later = try #require(try store.entry(second.id))
      #expect(later.operation.baseVersion == nil && later.operation.basePayload == nil)
      let record = try #require(try store.record(F.key("a")))
      #expect(record.server == nil && record.state == .created)
      #expect(record.payload == F.payload("A2"))
      // Completing the create rebases the later edit on the version it made.
      try store.complete(newID, serverRecord: F.server("a", "A1", version: 1))
      #expect(try store.entry(second.id)?.operation.baseVersion == 1)
    }
  }

  @Test(
    "server wins against a deletion: the record's entries and the record go",
    arguments: StoreAdapter.all)
  func takeGone(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      _ = try Self.edited(store)
      try store.applyAndEnqueue(
        .put(F.key("b"), payload: F.payload("B")), F.operation("b", .create, "B"))
      try store.takeGone(F.key("a"))
      #expect(try store.record(F.key("a")) == nil)
      #expect(try store.entries().map(\.key.id) == ["b"])
    }
  }

  @Test(
    "server wins against a re-creation: the entry deletes it again, the record shows deleted",
    arguments: StoreAdapter.all)
  func deleteAgain(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let (first, _) = try Self.edited(store)
      let remade = F.server("a", "A1", version: 1)
      let newID = F.operationID(7)
      let after = try store.deleteAgain(first.id, as: newID, onto: remade)
      #expect(after.id == newID && after.operation.kind == .delete)
      #expect(after.operation.baseVersion == 1 && after.operation.payload == nil)
      #expect(after.operation.basePayload == remade.payload && after.state == .pending)
      #expect(try store.entries().map(\.id) == [newID])
      let record = try #require(try store.record(F.key("a")))
      #expect(record.state == .deleted && record.payload == nil && record.server == remade)
      #expect(throws: StoreError.self) {
        try store.deleteAgain(newID, as: UUID(), onto: F.server("b", "B", version: 1))
      }
    }
  }

  @Test(
    "kept for the user: conflicted with null, the record's copy the re-creation or none",
    arguments: StoreAdapter.all)
  func keepGone(adapter: StoreAdapter) throws {
    try withStore(adapter) { store, _ in
      let (first, second) = try Self.edited(store)
      let kept = try store.keepGone(first.id, adopting: nil)
      #expect(kept.id == first.id && kept.state == .conflicted(serverRecord: .null))
      var record = try #require(try store.record(F.key("a")))
      #expect(record.server == nil && record.payload == F.payload("A2"))
      #expect(try store.entry(second.id)?.state == .pending)
      let remade = F.server("a", "A1", version: 1)
      try store.keepGone(first.id, adopting: remade)
      record = try #require(try store.record(F.key("a")))
      #expect(record.server == remade && record.state == .modified)
    }
  }

  // MARK: - Stores written before decision 2401

  /// Runs SQL with the `sqlite3` tool, as an older Courier's schema left the file.
  func sqlite(_ path: String, _ sql: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    process.waitUntilExit()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 0, "sqlite3: \(message)")
  }

  @Test("a schema-2 SQLite store (before parking) is migrated on open, every entry as it was")
  func sqliteSchemaTwo() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    // The outbox table exactly as schema 2 made it (migrations 1 and 2 of the code before this
    // one), with a pending, a refused and a conflicted entry.
    try sqlite(
      path,
      """
      PRAGMA journal_mode=WAL;
      CREATE TABLE records(collection TEXT NOT NULL, id TEXT NOT NULL, payload TEXT,
        state TEXT NOT NULL CHECK (state IN ('synced', 'created', 'modified', 'deleted')),
        server_payload TEXT, server_version INTEGER, server_updated_at REAL,
        PRIMARY KEY (collection, id)) WITHOUT ROWID;
      CREATE TABLE collections(name TEXT PRIMARY KEY NOT NULL, etag TEXT, last_refresh REAL)
        WITHOUT ROWID;
      CREATE TABLE outbox(sequence INTEGER PRIMARY KEY, operation_id TEXT NOT NULL UNIQUE,
        collection TEXT NOT NULL, record_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'delete')), payload TEXT,
        base_version INTEGER, enqueued_at REAL NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'rejected', 'conflicted')),
        reject_message TEXT, reject_code TEXT, conflict_record TEXT,
        attempts INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX outbox_by_record ON outbox(collection, record_id, sequence);
      CREATE TABLE counters(name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO counters(name, value) VALUES ('next_sequence', 8);
      ALTER TABLE outbox ADD COLUMN base_payload TEXT;
      INSERT INTO records VALUES ('articles', 'a', '{"title":"A1"}', 'modified',
        '{"title":"A"}', 1, 10.5);
      INSERT INTO outbox VALUES (3, '00000000-0000-4000-8000-000000000003', 'articles', 'a',
        'update', '{"title":"A1"}', 1, 100.25, 'pending', NULL, NULL, NULL, 2, '{"title":"A"}');
      INSERT INTO outbox VALUES (5, '00000000-0000-4000-8000-000000000005', 'articles', 'b',
        'create', '{"title":""}', NULL, 101.5, 'rejected', 'Title is empty.',
        'validation_failed', NULL, 1, NULL);
      INSERT INTO outbox VALUES (7, '00000000-0000-4000-8000-000000000007', 'articles', 'c',
        'delete', NULL, 4, 102.75, 'conflicted', NULL, NULL, '{"id":"c","version":5}', 1,
        NULL);
      PRAGMA user_version=2;
      """)
    let store = try SQLiteLocalStore(path: path)
    defer { store.close() }
    #expect(SQLiteLocalStore.schemaVersion == 3)
    let entries = try store.entries()
    #expect(entries.map(\.sequence) == [3, 5, 7])
    #expect(entries[0].id == F.operationID(3) && entries[0].state == .pending)
    #expect(
      entries[0].attempts == 2
        && entries[0].operation.basePayload == .object(["title": .string("A")]))
    #expect(entries[1].state == .rejected(message: "Title is empty.", code: "validation_failed"))
    #expect(
      entries[2].state
        == .conflicted(serverRecord: .object(["id": .string("c"), "version": .integer(5)])))
    #expect(try store.record(F.key("a"))?.server?.version == 1)
    // The new state is accepted, and the index and the numbering are as they were.
    try store.markParked(F.operationID(3), reason: "never proved", code: nil)
    #expect(try store.entry(F.operationID(3))?.state == .parked(reason: "never proved", code: nil))
    try store.enqueue(F.operation("d", .create, "D"))
    #expect(try store.entries().last?.sequence == 8)
    #expect(try store.entries().filter { $0.key == F.key("a") }.count == 1)
  }

  @Test("a file store written before parking opens, and a parked entry reads back")
  func fileStoreBefore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let folder = directory.path + "/store"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // A journal as the code before wrote it: a header and one line with a pending entry.
    let id = F.operationID(4)
    let line =
      #"{"m":[{"insertEntry":{"_0":{"attempts":2,"operation":{"baseVersion":1,"enqueuedAt":5,"#
      + #""id":"\#(id.uuidString)","key":{"collection":"articles","id":"a"},"kind":"update","#
      + #""payload":{"title":"A1"}},"sequence":4,"state":{"pending":{}}}}}],"seq":1}"#
    try Data((#"{"courierJournal":1}"# + "\n" + line + "\n").utf8).write(
      to: URL(fileURLWithPath: folder + "/outbox.journal"))
    var store = try FileLocalStore(directory: folder)
    let entry = try #require(try store.entry(id))
    #expect(entry.state == .pending && entry.attempts == 2 && entry.sequence == 4)
    try store.markParked(id, reason: "never proved", code: "reply_not_json")
    store.close()
    store = try FileLocalStore(directory: folder)
    defer { store.close() }
    #expect(try store.entry(id)?.state == .parked(reason: "never proved", code: "reply_not_json"))
    // The journal line says pending, carrying the reason: what an older Courier reads.
    let journal = try String(contentsOfFile: folder + "/outbox.journal", encoding: .utf8)
    let last = try #require(journal.split(separator: "\n").last)
    #expect(last.contains(#""state":{"pending":{"parked":{"#), "\(last)")
  }
}
