import CSQLite
import CSQLiteShim
import CourierDomain

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

/// A value bound to a statement parameter.
enum SQLiteValue {
  case null
  case int(Int64)
  case double(Double)
  case text(String)
}

/// One result row, read by column index.
struct SQLiteRow {
  fileprivate let statement: OpaquePointer

  func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

  func int(_ column: Int32) -> Int64? {
    isNull(column) ? nil : sqlite3_column_int64(statement, column)
  }

  func double(_ column: Int32) -> Double? {
    isNull(column) ? nil : sqlite3_column_double(statement, column)
  }

  func text(_ column: Int32) -> String? {
    guard let bytes = sqlite3_column_text(statement, column) else { return nil }
    return String(cString: bytes)
  }

  /// A text column's bytes as SQLite holds them, valid until the next step: no `String` is
  /// made (nil for NULL).
  func withBytes<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows
    -> T
  {
    guard let bytes = sqlite3_column_text(statement, column) else { return try body(nil) }
    let count = Int(sqlite3_column_bytes(statement, column))
    return try body(UnsafeRawBufferPointer(start: bytes, count: count))
  }
}

/// One SQLite connection with a cache of prepared statements. Not thread-safe: the store owns
/// it behind a lock. Every error names the database file.
final class SQLiteConnection {
  let path: String
  private var db: OpaquePointer?
  private var statements: [String: OpaquePointer] = [:]
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  init(path: String) throws(StoreError) {
    self.path = path
    if let reason = courier_sqlite_load_error() {
      // Loaded on first use (decision 1401): say which library is missing, not "can't open".
      throw StoreError(
        .io,
        "The local store \(path) needs SQLite (libsqlite3.so.0), which could not be loaded. "
          + "Install it (Debian and Ubuntu: apt-get install libsqlite3-0).",
        path: path, underlying: String(cString: reason))
    }
    try Self.createPrivately(path)
    _ = Self.configureMemory()
    var handle: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
    // Courier's VFS (decision 1411), after the memory settings (finding the unix VFS starts
    // SQLite): a kept log whose folder entry is on disk already costs no sync of the folder.
    let rc = sqlite3_open_v2(path, &handle, flags, courier_sqlite_vfs())
    db = handle
    if rc != SQLITE_OK {
      let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close_v2(handle)
      db = nil
      throw StoreError(
        .io, "The local store \(path) could not be opened.", path: path, underlying: message)
    }
    sqlite3_extended_result_codes(handle, 1)
  }

  /// Leaves the write-ahead log in place at close, not checkpointed (decision 1403).
  func keepLogOnClose() throws(StoreError) {
    guard courier_sqlite_keep_wal_on_close(db) == SQLITE_OK else {
      throw StoreError(
        .io, "The local store \(path) could not be set up.", path: path,
        underlying: db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }
  }

  /// Creates the database file with mode 0600 whatever the umask, before SQLite opens it:
  /// SQLite gives its `-wal`, `-shm` and `-journal` files the database file's mode, so they are
  /// private too. An existing file is left as it is (its mode is the composition root's
  /// concern). A path that is a folder, or whose folder is missing or a file, cannot be
  /// created: `cannotCreate`; an unwritable or full folder: `io`.
  private static func createPrivately(_ path: String) throws(StoreError) {
    var info = stat()
    if stat(path, &info) == 0 {
      if (info.st_mode & S_IFMT) == S_IFDIR {
        throw StoreError(
          .cannotCreate, "The local store \(path) is a folder, not a database file.", path: path)
      }
      return
    }
    let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd < 0 {
      let code = errno
      if code == EEXIST { return }  // another process created it meanwhile
      let cannotCreate = [ENOENT, ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG].contains(code)
      throw StoreError(
        cannotCreate ? .cannotCreate : .io,
        "The local store \(path) could not be created.", path: path,
        underlying: String(cString: strerror(code)))
    }
    // The umask may have narrowed 0600 (never widened it); set it exactly anyway.
    _ = fchmod(fd, 0o600)
    _ = Glibc.close(fd)
  }

  /// Gives SQLite its memory settings for short processes before it starts (decision 1410):
  /// applied once, asked before every open. Whether SQLite took all of them.
  static func configureMemory() -> Bool { courier_sqlite_configure() == SQLITE_OK }

  deinit { close() }

  func close() {
    for statement in statements.values { sqlite3_finalize(statement) }
    statements = [:]
    if let db { sqlite3_close_v2(db) }
    db = nil
  }

  func setBusyTimeout(_ milliseconds: Int32) { sqlite3_busy_timeout(db, milliseconds) }

  /// Builds the error for a failed call, naming the file.
  func error(_ rc: Int32, doing what: String) -> StoreError {
    let detail = (db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed") + " (code \(rc))"
    switch rc & 0xff {
    case SQLITE_BUSY, SQLITE_LOCKED:
      return StoreError(
        .busy, "The local store \(path) is in use by another process that did not let go.",
        path: path, underlying: "\(what): \(detail)")
    case SQLITE_FULL:
      return StoreError(
        .io, "The local store \(path) could not be written: the disk is full.", path: path,
        underlying: "\(what): \(detail)")
    case SQLITE_NOTADB, SQLITE_CORRUPT:
      return StoreError(
        .corrupt,
        "The local store \(path) is damaged or is not a Courier database; it was left as it "
          + "is. Move it aside to start afresh, or restore it from a backup.",
        path: path, underlying: "\(what): \(detail)")
    case SQLITE_CONSTRAINT:
      return StoreError(
        .duplicate, "The local store \(path) refused a duplicate entry.", path: path,
        underlying: "\(what): \(detail)")
    default:
      return StoreError(
        .io, "The local store \(path) could not be read or written.", path: path,
        underlying: "\(what): \(detail)")
    }
  }

  /// Runs SQL without parameters or results (several statements allowed).
  func exec(_ sql: String) throws(StoreError) {
    guard let db else { throw closedError }
    let rc = sqlite3_exec(db, sql, nil, nil, nil)
    if rc != SQLITE_OK { throw error(rc, doing: sql) }
  }

  /// Begins a write transaction (`BEGIN IMMEDIATE`). While several connections open a new file
  /// at once, one of them can be answered `SQLITE_READONLY` although it may write (the file was
  /// set up under it by another), and stays so: that answer is `busy`, for the opener to retry
  /// with a fresh connection. A connection that really is read-only fails as it is.
  func beginImmediate() throws(StoreError) {
    guard let db else { throw closedError }
    let rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
    if rc == SQLITE_OK { return }
    if rc == SQLITE_READONLY, sqlite3_db_readonly(db, "main") == 0 {
      throw StoreError(
        .busy, "The local store \(path) is being set up by another process.", path: path,
        underlying: "BEGIN IMMEDIATE: \(String(cString: sqlite3_errmsg(db))) (code \(rc))")
    }
    throw error(rc, doing: "BEGIN IMMEDIATE")
  }

  /// Runs one statement and returns its rows.
  func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) throws -> T) throws
    -> [T]
  {
    let statement = try prepared(sql)
    defer {
      sqlite3_reset(statement)
      sqlite3_clear_bindings(statement)
    }
    try bind(values, to: statement, sql: sql)
    var rows: [T] = []
    while true {
      let rc = sqlite3_step(statement)
      if rc == SQLITE_DONE { break }
      guard rc == SQLITE_ROW else { throw error(rc, doing: sql) }
      rows.append(try row(SQLiteRow(statement: statement)))
    }
    return rows
  }

  /// Runs one statement and returns how many rows it changed.
  @discardableResult
  func run(_ sql: String, _ values: [SQLiteValue] = []) throws(StoreError) -> Int {
    let statement = try prepared(sql)
    defer {
      sqlite3_reset(statement)
      sqlite3_clear_bindings(statement)
    }
    try bind(values, to: statement, sql: sql)
    let rc = sqlite3_step(statement)
    guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(rc, doing: sql) }
    return Int(sqlite3_changes(db))
  }

  private var closedError: StoreError {
    StoreError(.unusable, "The local store \(path) is closed.", path: path)
  }

  private func prepared(_ sql: String) throws(StoreError) -> OpaquePointer {
    if let statement = statements[sql] { return statement }
    guard let db else { throw closedError }
    var statement: OpaquePointer?
    let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard rc == SQLITE_OK, let statement else { throw error(rc, doing: sql) }
    statements[sql] = statement
    return statement
  }

  private func bind(_ values: [SQLiteValue], to statement: OpaquePointer, sql: String)
    throws(StoreError)
  {
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let rc: Int32
      switch value {
      case .null: rc = sqlite3_bind_null(statement, index)
      case .int(let number): rc = sqlite3_bind_int64(statement, index, number)
      case .double(let number): rc = sqlite3_bind_double(statement, index, number)
      case .text(let text): rc = sqlite3_bind_text(statement, index, text, -1, Self.transient)
      }
      if rc != SQLITE_OK { throw error(rc, doing: sql) }
    }
  }
}
