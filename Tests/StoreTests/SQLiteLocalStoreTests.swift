import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import Testing

@testable import CourierSQLite

#if canImport(Glibc)
  import Glibc
#endif

/// The SQLite adapter's own guarantees: damaged and foreign files, schema versions.
@Suite("SQLiteLocalStore")
struct SQLiteLocalStoreTests {
  typealias F = Fixture

  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  @Test("a fresh process runs SQLite with the short-process settings, and its store works")
  func memorySettings() async throws {
    // In a process of its own: in this one another library (NSS, under libvips) may have
    // started SQLite first, which then keeps its defaults, as the decision says.
    let probe = try #require(
      CrashTests.probe, "build the probe first: swift build --product courier-store-crash-probe")
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let result = try await ChildProcess.run([probe.path, "settings", "sqlite", directory.path, "7"])
    #expect(result.succeeded, "\(result)")
    #expect(result.stdout == "taken\n", "\(result)")
    // Its write is there for this process's store, whatever settings this one runs with.
    let store = try SQLiteLocalStore(path: directory.path + "/store.sqlite")
    defer { store.close() }
    #expect(try store.record(RecordKey(collection: "articles", id: "r7")) != nil)
    #expect(try store.counts().pending == 1)
  }

  /// Runs the probe's `vfs` mode (decision 1411) on `directory`, optionally under strace, and
  /// returns its report and how many times it called fsync or fdatasync (nil untraced).
  static func probeVFS(_ probe: URL, _ directory: String, _ n: Int, traced: Bool = false)
    async throws -> (report: String, syncs: Int?)
  {
    let trace = directory + "/vfs-\(n).strace"
    let probeArguments = [probe.path, "vfs", "sqlite-kept", directory, String(n)]
    let result = try await ChildProcess.run(
      traced
        ? ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", trace] + probeArguments
        : probeArguments)
    #expect(result.succeeded, "probe vfs \(n): \(result)")
    let out = result.stdout
    guard traced else { return (out, nil) }
    let lines = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
    let syncs = lines.split(separator: "\n").filter {
      $0.contains("fsync(") || $0.contains("fdatasync(")
    }
    return (out, syncs.count)
  }

  // getxattr(2) and setxattr(2), which the Glibc module does not export: looked up in libc.
  typealias GetAttribute =
    @convention(c) (
      UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int
    ) -> Int
  typealias SetAttribute =
    @convention(c) (
      UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32
    ) -> Int32

  /// The log's mark (user.courier.dirsynced), nil when it has none.
  static func dirsyncMark(_ path: String) throws -> String? {
    let symbol = try #require(dlsym(nil, "getxattr"), "no getxattr in libc")
    let get = unsafeBitCast(symbol, to: GetAttribute.self)
    var buffer = [UInt8](repeating: 0, count: 256)
    let length = get(path, "user.courier.dirsynced", &buffer, buffer.count)
    return length < 0 ? nil : String(decoding: buffer[..<length], as: UTF8.self)
  }

  /// Writes `value` as the log's mark.
  static func setDirsyncMark(_ path: String, _ value: String) throws -> Bool {
    let symbol = try #require(dlsym(nil, "setxattr"), "no setxattr in libc")
    let set = unsafeBitCast(symbol, to: SetAttribute.self)
    return set(path, "user.courier.dirsynced", value, value.utf8.count, 0) == 0
  }

  @Test(
    "a kept log is opened without creating it: its folder synced once, then a write is one sync")
  func keptLogIsOneSync() async throws {
    let probe = try #require(
      CrashTests.probe, "build the probe first: swift build --product courier-store-crash-probe")
    try #require(
      FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
      "strace is missing (scripts/setup installs it)")
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let log = directory.path + "/store.sqlite-wal"
    let scratch = directory.path + "/xattr-check"
    #expect(FileManager.default.createFile(atPath: scratch, contents: Data()))
    let birth = try FileManager.default.attributesOfItem(atPath: scratch)[.creationDate]
    guard try Self.setDirsyncMark(scratch, "check"), birth != nil else {
      // No user extended attributes or no birth times on this file system (an older tmpfs,
      // some network file systems): every log is opened as SQLite opens it, and nothing is
      // marked (1411, step 4).
      for n in 0..<3 {
        let plain = try await Self.probeVFS(probe, directory.path, n)
        #expect(plain.report.hasPrefix("kept=0 synced=0 "), "\(plain.report)")
      }
      #expect(try Self.dirsyncMark(log) == nil)
      return
    }

    // Creates the store and its log as SQLite does (the folder synced at the first sync).
    let first = try await Self.probeVFS(probe, directory.path, 0)
    #expect(first.report.hasPrefix("kept=0 synced=0 "), "\(first.report)")
    #expect(try Self.dirsyncMark(log) == nil)
    // The log exists and carries no mark: the VFS syncs the folder itself, then marks the log.
    let second = try await Self.probeVFS(probe, directory.path, 1)
    #expect(second.report.hasPrefix("kept=1 synced=1 "), "\(second.report)")
    let mark = try #require(try Self.dirsyncMark(log), "no mark on \(log)")
    #expect(mark.hasPrefix("v1 "))
    // Marked: opened without creating it, no folder sync; the write's commit is the one sync.
    let third = try await Self.probeVFS(probe, directory.path, 2, traced: true)
    #expect(third.report.hasPrefix("kept=1 synced=0 "), "\(third.report)")
    #expect(third.syncs == 1, "fsync/fdatasync calls: \(third.syncs.map(String.init) ?? "?")")
    // A mark naming another file (a copy that kept its attributes) is not trusted.
    let foreign = "v1 0:0 1 0.000000000"
    #expect(try Self.setDirsyncMark(log, foreign))
    let fourth = try await Self.probeVFS(probe, directory.path, 3)
    #expect(fourth.report.hasPrefix("kept=1 synced=1 "), "\(fourth.report)")
    #expect(try Self.dirsyncMark(log) == mark)

    let store = try SQLiteLocalStore(
      path: directory.path + "/store.sqlite", options: .init(checkpointOnClose: false))
    defer { store.close() }
    #expect(try store.entries().map(\.id) == (0..<4).map(Fixture.operationID))
  }

  @Test(
    "a file that is not a readable database is an error naming it, and is left untouched",
    arguments: ["random", "text", "truncated"])
  func corruptFile(kind: String) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    var data: Data
    // The random bytes are seeded, and the seed is in every message below (Docs/testing.md).
    var input = kind
    switch kind {
    case "random":
      var generator = SplitMix64(testSeed: 0x5_0A17_E5EE_D001)
      data = Data((0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) })
      input += ", " + generator.seedDescription
    case "text":
      data = Data("{\"this\": \"is JSON, not SQLite\"}\n".utf8)
    default:
      // A real store whose header survived but whose pages did not.
      let store = try SQLiteLocalStore(path: path)
      for n in 0..<200 {
        try store.enqueue(F.operation("r\(n)", .create, String(repeating: "x", count: 200)))
      }
      store.close()
      data = try bytes(path)
      data = data.prefix(4_096) + Data(repeating: 0xEE, count: data.count - 4_096)
    }
    try data.write(to: URL(fileURLWithPath: path))

    let error = try #require(throws: StoreError.self, "\(input)") {
      let store = try SQLiteLocalStore(path: path, options: .init(checkIntegrityOnOpen: true))
      _ = try store.pending()
    }
    #expect(error.code == .corrupt, "\(input)")
    #expect(error.path == path, "\(input)")
    #expect(error.message.contains(path), "\(input)")
    #expect(try bytes(path) == data, "\(input)")
  }

  @Test("a database written by a newer schema is refused and left untouched")
  func newerSchema() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    try SQLiteLocalStore(path: path).close()
    var data = try bytes(path)
    // user_version is the big-endian 32-bit integer at offset 60 of the header.
    data.replaceSubrange(60..<64, with: [0, 0, 0, 99])
    try data.write(to: URL(fileURLWithPath: path))
    let error = try #require(throws: StoreError.self) { try SQLiteLocalStore(path: path) }
    #expect(error.code == .newerSchema && error.message.contains(path))
    #expect(try bytes(path) == data)
  }

  @Test(
    "checkpointOnClose off: close leaves the log, and a reopened store reads what it holds",
    arguments: [true, false])
  func logAtClose(checkpointOnClose: Bool) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let options = SQLiteLocalStore.Options(checkpointOnClose: checkpointOnClose)
    let store = try SQLiteLocalStore(path: path, options: options)
    for n in 0..<3 { try store.enqueue(F.operation("r\(n)", .create, "v\(n)")) }
    store.close()
    let log = FileManager.default.contents(atPath: path + "-wal")
    if checkpointOnClose {
      #expect(log == nil, "the log outlived close")
    } else {
      #expect((log?.count ?? 0) > 0, "the log was folded or removed at close")
    }
    let reopened = try SQLiteLocalStore(path: path, options: options)
    defer { reopened.close() }
    #expect(try reopened.pending().count == 3)
  }

  @Test(
    "checkpointOnClose off: a log past 100 frames is folded by the next process's first write, which reuses it from its start"
  )
  func longLogFoldedBeforeTheNextWrite() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let options = SQLiteLocalStore.Options(checkpointOnClose: false)
    let size = { (path: String) in FileManager.default.contents(atPath: path)?.count ?? 0 }
    // Left open, as a process that exits leaves it: each write adds frames to the log.
    let writer = try SQLiteLocalStore(path: path, options: options)
    for n in 0..<60 {
      try writer.enqueue(F.operation("r\(n)", .create, String(repeating: "x", count: 9000)))
    }
    let logBytes = size(path + "-wal")
    #expect(SQLiteLocalStore.logIsPast(path, frames: 100), "the log held \(logBytes) bytes")
    #expect(!SQLiteLocalStore.logIsPast(path, frames: 100_000))
    let fileBefore = size(path)

    let reopened = try SQLiteLocalStore(path: path, options: options)
    defer { reopened.close() }
    // Opening alone folds nothing: only a write grows the log.
    #expect(SQLiteLocalStore.logIsPast(path, frames: 100))
    try reopened.enqueue(F.operation("after", .create, "A"))
    // Folded into the file, then started afresh in place: the same file, few frames in it.
    #expect(!SQLiteLocalStore.logIsPast(path, frames: 100), "the log was not started afresh")
    #expect(size(path + "-wal") >= logBytes, "the log was truncated, not reused")
    #expect(size(path) > fileBefore + 60 * 9000, "the file did not take the log's pages")
    #expect(try reopened.pending().count == 61)
    writer.close()
    // Every write is still there for a new process, which recovers the restarted log.
    let third = try SQLiteLocalStore(path: path, options: options)
    defer { third.close() }
    #expect(try third.pending().count == 61)
  }

  @Test("a missing directory cannot hold the file: cannotCreate naming it")
  func unopenable() throws {
    let path = "/nonexistent-\(getpid())/store.sqlite"
    let error = try #require(throws: StoreError.self) { try SQLiteLocalStore(path: path) }
    #expect(error.code == .cannotCreate && error.message.contains(path))
  }

  @Test(
    "synchronous=NORMAL opens and stores the same", arguments: SQLiteLocalStore.Synchronous.allCases
  )
  func synchronousModes(mode: SQLiteLocalStore.Synchronous) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let store = try SQLiteLocalStore(path: path, options: .init(synchronous: mode))
    try store.enqueue(F.operation("a", .create, "A"))
    store.close()
    let reopened = try SQLiteLocalStore(path: path)
    defer { reopened.close() }
    #expect(try reopened.counts().pending == 1)
  }

  @Test("two connections to one file see each other's commits")
  func twoConnections() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let first = try SQLiteLocalStore(path: path)
    let second = try SQLiteLocalStore(path: path)
    defer {
      first.close()
      second.close()
    }
    try first.enqueue(F.operation("a", .create, "A"))
    try second.enqueue(F.operation("b", .create, "B"))
    #expect(try first.pending().map(\.key.id) == ["a", "b"])
  }

  @Test("an up-to-date store opens while another connection holds the write lock")
  func opensBesideAWriter() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let writer = try SQLiteLocalStore(path: path)
    defer { writer.close() }
    // The open reads the schema version and finds it current: it takes no write transaction,
    // so it does not wait for (or fail on) the writer's lock.
    let opened = try writer.write { _ in
      let reader = try SQLiteLocalStore(
        path: path, options: .init(busyTimeout: .milliseconds(20)))
      defer { reader.close() }
      return StorePlan([], result: try reader.counts().pending)
    }
    #expect(opened == 0)
  }

  @Test(
    "the header tells a file in WAL mode from a new, empty or foreign one",
    arguments: ["store", "missing", "empty", "text"])
  func walHeader(kind: String) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    switch kind {
    case "store": try SQLiteLocalStore(path: path).close()
    case "empty": try Data().write(to: URL(fileURLWithPath: path))
    case "text":
      try Data(String(repeating: "SQLite format 3\u{2}\u{2}", count: 3).utf8)
        .write(to: URL(fileURLWithPath: path))
    default: break
    }
    #expect(SQLiteLocalStore.headerSaysWAL(path) == (kind == "store"))
  }

  @Test("after close, calls fail clearly")
  func closed() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try SQLiteLocalStore(path: directory.path + "/store.sqlite")
    store.close()
    let error = try #require(throws: StoreError.self) { try store.pending() }
    #expect(error.code == .unusable)
  }

  /// Runs SQL on a database file with the `sqlite3` tool (scripts/setup installs it), as an
  /// older Courier's schema would have left it.
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

  @Test("a schema-1 store (no base copies) is migrated on open; its entries read without one")
  func migratesBaseCopies() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let store = try SQLiteLocalStore(path: path)
    try store.applyServerRecord(F.server("a", "A", version: 1), key: F.key("a"))
    let operation = F.operation("a", .update, "A1", base: 1)
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A1")), operation)
    #expect(try store.entry(operation.id)?.operation.basePayload == F.payload("A"))
    store.close()
    // What schema 1 held: the same tables without the column.
    try sqlite(path, "ALTER TABLE outbox DROP COLUMN base_payload; PRAGMA user_version=1;")

    let reopened = try SQLiteLocalStore(path: path)
    defer { reopened.close() }
    let old = try #require(try reopened.entry(operation.id))
    #expect(old.operation.basePayload == nil && old.operation.payload == F.payload("A1"))
    let later = F.operation("a", .update, "A2", base: 1)
    try reopened.recordAttempt(operation.id)
    try reopened.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A2")), later)
    #expect(try reopened.entry(later.id)?.operation.basePayload == F.payload("A"))
    #expect(SQLiteLocalStore.schemaVersion >= 2)
  }
}
