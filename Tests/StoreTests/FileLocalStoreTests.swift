import CourierDomain
import CourierFileStore
import CourierPorts
import Foundation
import Testing

/// The file adapter's own guarantees: torn appends, damaged lines, compaction, one process.
@Suite("FileLocalStore")
struct FileLocalStoreTests {
  typealias F = Fixture

  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  func append(_ text: String, to path: String) throws {
    let handle = try #require(FileHandle(forWritingAtPath: path))
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(text.utf8))
  }

  /// A store with three pending entries, closed; returns its directory and their ids.
  func closedStore() throws -> (TemporaryDirectory, [UUID]) {
    let directory = try TemporaryDirectory()
    let store = try FileLocalStore(directory: directory.path + "/store")
    var ids: [UUID] = []
    for n in 0..<3 {
      let op = F.operation("r\(n)", .create, "T\(n)", operationID: F.operationID(n))
      try store.applyAndEnqueue(.put(F.key("r\(n)"), payload: F.payload("T\(n)")), op)
      ids.append(op.id)
    }
    store.close()
    return (directory, ids)
  }

  @Test(
    "a torn last journal line is dropped on open, and the journal is repaired",
    arguments: [
      "{\"seq\":99,\"m\":[{\"insertEntry\":{\"_0\":{\"sequ",  // cut mid-line, no newline
      "{\"seq\":99,\"m\":[{\"ins\n",  // cut, newline reached the disk
      "\0\0\0\0\0\0\0\0",  // zeros after a crash
    ])
  func tornTail(tail: String) throws {
    let (directory, ids) = try closedStore()
    defer { directory.remove() }
    let journal = directory.path + "/store/outbox.journal"
    let clean = try bytes(journal)
    try append(tail, to: journal)

    let store = try FileLocalStore(directory: directory.path + "/store")
    #expect(store.recovery.droppedTornBytes == tail.utf8.count)
    #expect(try store.pending().map(\.id) == ids)
    #expect(try bytes(journal) == clean)
    // Appends after the repair land on a clean line.
    try store.enqueue(F.operation("z", .delete, base: 1))
    store.close()
    let again = try FileLocalStore(directory: directory.path + "/store")
    defer { again.close() }
    #expect(again.recovery.droppedTornBytes == 0)
    #expect(try again.pending().count == 4)
  }

  @Test("a damaged line before the last is an error naming the file and line; nothing changes")
  func corruptMiddleLine() throws {
    let (directory, _) = try closedStore()
    defer { directory.remove() }
    let journal = directory.path + "/store/outbox.journal"
    var lines = try String(decoding: bytes(journal), as: UTF8.self).split(
      separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 5)  // header, three lines, the empty rest after the last newline
    lines[2] = "{\"seq\":2,\"m\":[{\"insertEntry\":garbage}]}"
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: journal))
    let damaged = try bytes(journal)

    let error = try #require(throws: StoreError.self) {
      try FileLocalStore(directory: directory.path + "/store")
    }
    #expect(error.code == .corrupt)
    #expect(error.line == 3)
    #expect(error.path == journal)
    #expect(error.message.contains(journal) && error.message.contains("line 3"))
    #expect(try bytes(journal) == damaged)
  }

  @Test("a line that does not follow from the ones before is damage, not a torn tail")
  func inconsistentLine() throws {
    let (directory, _) = try closedStore()
    defer { directory.remove() }
    let journal = directory.path + "/store/outbox.journal"
    try append(
      "{\"seq\":9,\"m\":[{\"deleteEntry\":{\"sequence\":77}}]}\n{\"seq\":10,\"m\":[]}\n",
      to: journal)
    let error = try #require(throws: StoreError.self) {
      try FileLocalStore(directory: directory.path + "/store")
    }
    #expect(error.code == .corrupt && error.line == 5)
  }

  @Test("a damaged snapshot is an error naming it; nothing changes")
  func corruptSnapshot() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try FileLocalStore(
      directory: directory.path + "/store", options: .init(snapshotThreshold: 0))
    try store.applyServerList(
      [F.server("a", "A", version: 1)], collection: F.collection, etag: nil, refreshedAt: F.epoch)
    store.close()
    let snapshot = directory.path + "/store/records.json"
    var data = try bytes(snapshot)
    data[data.count / 2] = 0x7B
    data.removeLast(3)
    try data.write(to: URL(fileURLWithPath: snapshot))

    let error = try #require(throws: StoreError.self) {
      try FileLocalStore(directory: directory.path + "/store")
    }
    #expect(error.code == .corrupt && error.path == snapshot && error.message.contains(snapshot))
    #expect(try bytes(snapshot) == data)
  }

  @Test("a missing journal beside a snapshot is reported, not recreated empty")
  func missingJournal() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let store = try FileLocalStore(directory: path)
    _ = try DurabilityTests.populate(store)
    try store.compact()
    store.close()
    try FileManager.default.removeItem(atPath: path + "/outbox.journal")
    let error = try #require(throws: StoreError.self) { try FileLocalStore(directory: path) }
    #expect(error.code == .corrupt && error.message.contains("missing"))
    #expect(!FileManager.default.fileExists(atPath: path + "/outbox.journal"))
  }

  @Test("a journal from a newer version is refused, not misread")
  func newerJournal() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    try FileManager.default.createDirectory(
      atPath: directory.path + "/store", withIntermediateDirectories: true)
    try Data("{\"courierJournal\":7}\n".utf8).write(
      to: URL(fileURLWithPath: directory.path + "/store/outbox.journal"))
    let error = try #require(throws: StoreError.self) {
      try FileLocalStore(directory: directory.path + "/store")
    }
    #expect(error.code == .newerSchema)
  }

  @Test("a store of format 1 opens, reads the same, and is rewritten in format 2 at once")
  func formatOneUpgraded() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let folder = directory.path + "/store"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // A snapshot and a journal as format 1 wrote them: JSON values as JSON.
    let snapshot =
      #"{"collections":[],"format":1,"journalSequence":1,"records":[{"key":{"collection":"#
      + #""articles","id":"a"},"payload":{"n":9007199254740993,"title":"A"},"server":{"id":"a","#
      + #""payload":{"n":9007199254740993,"title":"A"},"version":1},"state":"synced"}]}"#
    let id = F.operationID(1)
    let line =
      #"{"m":[{"insertEntry":{"_0":{"attempts":0,"operation":{"baseVersion":1,"enqueuedAt":5,"#
      + #""id":"\#(id.uuidString)","key":{"collection":"articles","id":"a"},"kind":"update","#
      + #""payload":{"n":0.5,"title":"A2"}},"sequence":1,"state":{"pending":{}}}}}],"seq":2}"#
    try Data(snapshot.utf8).write(to: URL(fileURLWithPath: folder + "/records.json"))
    try Data((#"{"courierJournal":1}"# + "\n" + line + "\n").utf8).write(
      to: URL(fileURLWithPath: folder + "/outbox.journal"))
    for round in ["opened", "reopened"] {
      let store = try FileLocalStore(directory: folder)
      defer { store.close() }
      let record = try #require(try store.record(F.key("a")), "\(round)")
      #expect(record.payload?.jsonText == #"{"n":9007199254740993,"title":"A"}"#, "\(round)")
      let entry = try #require(try store.entry(id), "\(round)")
      #expect(entry.operation.payload?.jsonText == #"{"n":0.5,"title":"A2"}"#, "\(round)")
      let journal = try String(contentsOfFile: folder + "/outbox.journal", encoding: .utf8)
      #expect(journal.hasPrefix(#"{"courierJournal":2}"#), "\(round): \(journal)")
      let records = try String(contentsOfFile: folder + "/records.json", encoding: .utf8)
      #expect(records.contains(#""format":2"#), "\(round)")
      #expect(records.contains(#""payload":"{\"n\":9007199254740993,"#), "\(round): \(records)")
    }
  }

  @Test("compaction keeps the live state and bounds the journal")
  func compaction() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let store = try FileLocalStore(directory: path, options: .init(compactionThreshold: 4_096))
    var sizes: [Int] = []
    for n in 0..<200 {
      let op = F.operation("r\(n % 50)", .create, "T\(n)", operationID: F.operationID(n))
      try store.applyAndEnqueue(.put(F.key("r\(n % 50)"), payload: F.payload("T\(n)")), op)
      try store.recordAttempt(op.id)
      if n % 3 != 0 {
        try store.complete(op.id, serverRecord: F.server("r\(n % 50)", "T\(n)", version: n + 1))
      }
      sizes.append(store.journalSize)
    }
    try store.applyServerList(
      [F.server("r1", "server", version: 1_000)], collection: F.collection, etag: "\"z\"",
      refreshedAt: F.epoch)
    let before = try DurabilityTests.dump(store)
    try store.compact()
    let live = store.journalSize
    store.close()
    let compactions = zip(sizes, sizes.dropFirst()).filter { $0 > $1 }.count
    #expect(compactions >= 3)
    // The journal stays within twice its compacted size (plus the line that crossed it).
    #expect(sizes.max() ?? .max <= max(4_096, 2 * live) + 2_048)
    #expect(before.entries.count == 67)

    let reopened = try FileLocalStore(directory: path)
    defer { reopened.close() }
    #expect(try DurabilityTests.dump(reopened) == before)
  }

  @Test("a crash between the snapshot and the journal rewrite loses nothing")
  func crashInsideCompaction() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let store = try FileLocalStore(directory: path)
    _ = try DurabilityTests.populate(store)
    let before = try DurabilityTests.dump(store)
    let oldJournal = try bytes(path + "/outbox.journal")
    try store.compact()
    store.close()
    // Put the pre-compaction journal back beside the new snapshot: the state the disk holds
    // if the process died after the snapshot's rename and before the journal's.
    try oldJournal.write(to: URL(fileURLWithPath: path + "/outbox.journal"))
    let reopened = try FileLocalStore(directory: path)
    defer { reopened.close() }
    #expect(try DurabilityTests.dump(reopened) == before)
  }

  @Test("a second process (or instance) waits for a store in use, then gives up: busy")
  func exclusive() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try FileLocalStore(directory: directory.path + "/store")
    let error = try #require(throws: StoreError.self) {
      try FileLocalStore(
        directory: directory.path + "/store", options: .init(busyTimeout: .milliseconds(50)))
    }
    #expect(error.code == .busy && error.message.contains("in use"))
    store.close()
    let reopened = try FileLocalStore(directory: directory.path + "/store")
    reopened.close()
  }

  @Test("close releases the lock even while a spawning child still holds a copy of it")
  func closeReleasesSharedLock() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let store = try FileLocalStore(directory: path)
    // A child being spawned by another thread holds a copy of every descriptor until its
    // exec. A `dup` of the store's lock descriptor is that copy, made deterministic.
    let lockPath = URL(fileURLWithPath: path + "/lock").resolvingSymlinksInPath().path
    let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    let lockFD = try #require(
      descriptors.compactMap(Int32.init).first { fd in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"))
          == lockPath
      })
    let copy = dup(lockFD)
    try #require(copy >= 0)
    defer { close(copy) }
    store.close()
    let reopened = try FileLocalStore(directory: path)
    reopened.close()
  }

  @Test("after close, calls fail clearly")
  func closed() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try FileLocalStore(directory: directory.path + "/store")
    store.close()
    let error = try #require(throws: StoreError.self) { try store.pending() }
    #expect(error.code == .unusable)
  }

  /// A JSON value with every `basePayload` member removed, as a journal line written before
  /// Courier kept base copies has it.
  static func withoutBaseCopies(_ value: Any) -> Any {
    if let object = value as? [String: Any] {
      return object.filter { $0.key != "basePayload" }.mapValues(withoutBaseCopies)
    }
    if let array = value as? [Any] { return array.map(withoutBaseCopies) }
    return value
  }

  @Test("journal lines written before base copies were kept read as entries without one")
  func journalWithoutBaseCopies() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let store = try FileLocalStore(directory: path)
    try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
    let operation = F.operation("a", .update, "A1", base: 1)
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), operation)
    #expect(try store.entry(operation.id)?.operation.basePayload == F.payload("A"))
    store.close()
    let journal = path + "/outbox.journal"
    let lines = String(decoding: try bytes(journal), as: UTF8.self).split(separator: "\n")
    var rewritten = ""
    for line in lines {
      let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
      let old = try JSONSerialization.data(
        withJSONObject: Self.withoutBaseCopies(value), options: [.sortedKeys])
      rewritten += String(decoding: old, as: UTF8.self) + "\n"
    }
    #expect(!rewritten.contains("basePayload") && rewritten.count < lines.joined().count + 10)
    try Data(rewritten.utf8).write(to: URL(fileURLWithPath: journal))

    let reopened = try FileLocalStore(directory: path)
    defer { reopened.close() }
    let entry = try #require(try reopened.entry(operation.id))
    #expect(entry.operation.basePayload == nil && entry.operation.payload == F.payload("A1"))
  }
}
