import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A record store and outbox in one SQLite database, so a local write and its outbox entry
/// commit in one transaction. WAL journal, `synchronous=FULL` by default (each commit is on
/// disk when the call returns), schema versioned with `PRAGMA user_version`, prepared
/// statements, a busy timeout for other processes. A damaged file is reported, naming it, and
/// left untouched: the store never resets itself.
public final class SQLiteLocalStore: LocalStore {
  /// How hard each commit is pushed to disk.
  package enum Synchronous: String, Sendable, CaseIterable {
    /// The WAL is synced at every commit: a returned call survives a power loss.
    case full = "FULL"
    /// The WAL is synced at checkpoints only: consistent after a crash, but the last commits
    /// may be lost on a power loss. For measurements and caches.
    case normal = "NORMAL"
  }

  /// Opening options.
  package struct Options: Sendable, Equatable {
    /// The durability of each commit.
    package var synchronous: Synchronous
    /// How long to wait for another process holding the database.
    package var busyTimeout: Duration
    /// Whether to run `PRAGMA quick_check` on open (reads the whole file).
    package var checkIntegrityOnOpen: Bool
    /// Whether `close()` copies the write-ahead log into the database file and deletes it
    /// (the default: the file alone then holds everything). Off, the log stays for the next
    /// process to append to, and a short-lived process's commit costs one `fdatasync` instead
    /// of five (the log's header, its folder, the commit, a checkpoint's two); a close folds the
    /// log into the file and empties it once it passes 100 pages. The folder's `-wal` file is then part of
    /// the data (decision 1403). The composition root opens its stores this way.
    package var checkpointOnClose: Bool

    /// Creates options.
    /// - Parameters:
    ///   - synchronous: the durability of each commit.
    ///   - busyTimeout: the wait for another process.
    ///   - checkIntegrityOnOpen: whether to check the whole file on open.
    ///   - checkpointOnClose: whether closing folds the log into the database file.
    package init(
      synchronous: Synchronous = .full, busyTimeout: Duration = .seconds(5),
      checkIntegrityOnOpen: Bool = false, checkpointOnClose: Bool = true
    ) {
      self.synchronous = synchronous
      self.busyTimeout = busyTimeout
      self.checkIntegrityOnOpen = checkIntegrityOnOpen
      self.checkpointOnClose = checkpointOnClose
    }
  }

  /// How long the log kept at close may grow, in frames (a page each), before it is folded
  /// into the database file: by the first write of the next process, or a close.
  static let keptLogPages = 100

  /// Whether SQLite runs with Courier's settings for short processes (decision 1410: no memory
  /// statistics, no lookaside, no page cache allocated ahead of use); false when something else
  /// in the process started SQLite before the first store opened, which keeps its defaults.
  package static var runsWithShortProcessSettings: Bool { SQLiteConnection.configureMemory() }

  /// The schema version this code writes.
  package static let schemaVersion = Int64(SQLiteSchema.migrations.count)

  /// The database file.
  package let path: String
  private let keepsLog: Bool
  /// Set at open when the kept log is past `keptLogPages`: the first write folds it first
  /// (decision 1403, amended in 1411).
  private let foldsBeforeWrite: Atomic<Bool>

  /// The connection (not thread-safe: every use holds this lock), nil once closed.
  private let locked: Mutex<SQLiteConnection?>

  /// Runs `body` with the open connection, holding the lock.
  private func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
    try locked.withLock { connection throws -> T in
      guard let connection else { throw StoreError(.unusable, "The local store is closed.") }
      return try body(connection)
    }
  }

  /// Opens (or creates) a store in one SQLite database file, migrating its schema if it is
  /// older; libsqlite3 is loaded on first use.
  /// - Parameter path: the database file; its directory must exist.
  /// - Throws: `StoreError` naming the file: `corrupt` when it is not a readable database
  ///   (the file is left untouched), `newerSchema` when a newer Courier wrote it, `io`.
  public convenience init(path: String) throws {
    try self.init(path: path, options: Options())
  }

  /// Opens (or creates) a store, migrating its schema if it is older.
  /// - Parameters:
  ///   - path: the database file; its directory must exist.
  ///   - options: opening options.
  /// - Throws: `StoreError` naming the file: `corrupt` when it is not a readable database
  ///   (the file is left untouched), `newerSchema` when a newer Courier wrote it, `io`.
  package init(path: String, options: Options) throws {
    self.path = path
    // A connection that found the new file being set up by another opener is answered
    // read-only for good (SQLiteConnection.beginImmediate): a fresh one is tried until the
    // busy timeout.
    let deadline = ContinuousClock.now.advanced(by: options.busyTimeout)
    var connection: SQLiteConnection
    while true {
      connection = try SQLiteConnection(path: path)
      do {
        try Self.prepare(connection, options: options)
        break
      } catch let error as StoreError where error.code == .busy && ContinuousClock.now < deadline {
        connection.close()
        usleep(5_000)
      } catch {
        connection.close()
        throw error
      }
    }
    locked = Mutex(connection)
    keepsLog = !options.checkpointOnClose
    foldsBeforeWrite = Atomic(keepsLog && Self.logIsPast(path, frames: Self.keptLogPages))
  }

  private static func prepare(_ connection: SQLiteConnection, options: Options) throws {
    let milliseconds =
      options.busyTimeout.components.seconds * 1000
      + options.busyTimeout.components.attoseconds / 1_000_000_000_000_000
    connection.setBusyTimeout(Int32(clamping: milliseconds))
    if !options.checkpointOnClose { try connection.keepLogOnClose() }
    // Read-only first: a file that is not a database fails here, before anything is written.
    let version = try knownSchemaVersion(connection)
    if options.checkIntegrityOnOpen {
      let result = try connection.query("PRAGMA quick_check") { $0.text(0) ?? "" }
      if result != ["ok"] {
        throw StoreError(
          .corrupt,
          "The local store \(connection.path) is damaged; it was left as it is.",
          path: connection.path, underlying: result.prefix(3).joined(separator: "; "))
      }
    }
    // A file already in WAL mode (persistent, in its header) needs no `PRAGMA journal_mode`:
    // one statement fewer to compile at every open.
    if !Self.headerSaysWAL(connection.path) {
      let mode = try walMode(connection, waiting: options.busyTimeout)
      if mode?.lowercased() != "wal" {
        throw StoreError(
          .io, "The local store \(connection.path) cannot use write-ahead logging.",
          path: connection.path, underlying: "journal_mode=\(mode ?? "?")")
      }
    }
    try connection.exec("PRAGMA synchronous=\(options.synchronous.rawValue)")
    // Up to date already (the version never goes back): no write transaction to take.
    if version < schemaVersion { try migrate(connection) }
  }

  /// Whether the database file's header says it is in WAL mode (bytes 18 and 19, the file
  /// format's write and read versions, are 2); false for a new, empty or unreadable file, which
  /// then goes through `PRAGMA journal_mode=WAL`.
  static func headerSaysWAL(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { _ = Glibc.close(fd) }
    var header = [UInt8](repeating: 0, count: 20)
    let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 20, 0) }
    return count == 20 && header[18] == 2 && header[19] == 2
  }

  /// Switches a database to WAL. Several processes opening a new file at once all try it; the
  /// switch needs an exclusive lock and SQLite answers `SQLITE_BUSY` without calling the busy
  /// handler, so it is retried here until the busy timeout (it is a no-op once one succeeded).
  private static func walMode(_ connection: SQLiteConnection, waiting timeout: Duration) throws
    -> String?
  {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
      do {
        return try connection.query("PRAGMA journal_mode=WAL") { $0.text(0) ?? "" }.first
      } catch let error as StoreError where error.code == .busy {
        if ContinuousClock.now >= deadline { throw error }
        usleep(5_000)
      }
    }
  }

  /// The file's schema version (`user_version`).
  /// - Throws: `StoreError.newerSchema` when a newer Courier wrote it: it is left as it is.
  private static func knownSchemaVersion(_ connection: SQLiteConnection) throws -> Int64 {
    let version = try connection.query("PRAGMA user_version") { $0.int(0) ?? 0 }.first ?? 0
    if version > schemaVersion {
      throw StoreError(
        .newerSchema,
        "The local store \(connection.path) was written by a newer version of Courier "
          + "(schema \(version), this one knows \(schemaVersion)); it was left as it is.",
        path: connection.path)
    }
    return version
  }

  /// Brings the schema up to date in one write transaction: the version is read again under
  /// the write lock, so several processes opening a new file at once never both migrate (the
  /// later ones wait on the busy timeout, then find the schema done).
  private static func migrate(_ connection: SQLiteConnection) throws {
    try connection.beginImmediate()
    do {
      let version = try knownSchemaVersion(connection)
      for (index, migration) in SQLiteSchema.migrations.enumerated()
      where Int64(index) >= version {
        try connection.exec(migration)
      }
      if version < schemaVersion { try connection.exec("PRAGMA user_version=\(schemaVersion)") }
      try connection.exec("COMMIT")
    } catch {
      try? connection.exec("ROLLBACK")
      throw error
    }
  }

  /// Closes the database. Later calls throw `StoreError.unusable`.
  package func close() {
    // One hold of the lock: no other call can find the connection closed but still set.
    locked.withLock { connection in
      guard let open = connection else { return }
      if keepsLog, Self.logIsPast(path, frames: Self.keptLogPages) {
        // Every process after the last one's close recovers the log and counts none of it as
        // copied yet, so SQLite's own checkpoint at commit would copy the whole log again at
        // every commit once it passed its limit, and never restart it: here, past 100 frames,
        // it is copied once and emptied (decision 1403). TRUNCATE, not RESTART as before a
        // write: no write follows to start the log afresh.
        _ = try? open.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
      }
      open.close()
      connection = nil
    }
  }

  /// Whether the write-ahead log beside the database holds more than `frames` frames since it
  /// last started afresh: frame number `frames + 1` carries the salts of the log's header
  /// (SQLite's WAL format: the header's salts at bytes 16–23, each frame's 24-byte header
  /// repeats them at its bytes 8–15; a restarted log gets new random salts, so the frames an
  /// earlier round left further on do not count). False without a log or with a shorter one.
  /// A log folded before a write keeps its size, so its size says nothing (decision 1411).
  static func logIsPast(_ path: String, frames: Int) -> Bool {
    let fd = open(path + "-wal", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { _ = Glibc.close(fd) }
    var header = [UInt8](repeating: 0, count: 32)
    guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 32, 0) }) == 32 else {
      return false
    }
    let magic = header[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    let pageSize = Int(header[8..<12].reduce(0) { $0 << 8 | UInt32($1) })
    guard magic & 0xFFFF_FFFE == 0x377F_0682, pageSize >= 512, pageSize <= 65536 else {
      return false
    }
    var frame = [UInt8](repeating: 0, count: 24)
    let offset = off_t(32 + frames * (24 + pageSize))
    guard frame.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 24, offset) }) == 24 else {
      return false
    }
    return frame[8..<16] == header[16..<24]
  }

  /// Runs a read in a transaction, for a consistent view.
  /// - Parameter body: the read.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws, or `StoreError`.
  public func read<T: Sendable>(_ body: (any LocalStoreReader) throws -> T) throws -> T {
    try withConnection { connection in
      // BEGIN, COMMIT and ROLLBACK as statements prepared once per connection (`run`), not
      // compiled again at each transaction by `exec`.
      try connection.run("BEGIN")
      do {
        let result = try body(SQLiteReader(connection: connection))
        try connection.run("COMMIT")
        return result
      } catch {
        _ = try? connection.run("ROLLBACK")
        throw error
      }
    }
  }

  /// Runs a write transaction (`BEGIN IMMEDIATE`), committed durably or rolled back.
  /// - Parameter body: reads and plans.
  /// - Returns: the plan's result.
  /// - Throws: what `body` throws, or `StoreError`; nothing changed then.
  public func write<T: Sendable>(_ body: (any LocalStoreReader) throws -> StorePlan<T>) throws
    -> T
  {
    try withConnection { connection in
      if foldsBeforeWrite.exchange(false, ordering: .relaxed) {
        // The kept log passed 100 frames (decision 1403): copied into the file once, before
        // this write, with RESTART rather than TRUNCATE. The write that follows then starts
        // the log afresh at its beginning and over blocks the file already has, so the
        // commit's fdatasync writes the frames and no file-size or block metadata, as every
        // later write does until the log passes its old length (decision 1411). A checkpoint
        // that cannot finish (another process reading) is left to the next one.
        _ = try? connection.query("PRAGMA wal_checkpoint(RESTART)") { $0.int(0) }
      }
      try connection.beginImmediate()
      do {
        let plan = try body(SQLiteReader(connection: connection))
        for mutation in plan.mutations { try SQLiteWriter.apply(mutation, on: connection) }
        try connection.run("COMMIT")
        return plan.result
      } catch {
        _ = try? connection.run("ROLLBACK")
        throw error
      }
    }
  }
}
