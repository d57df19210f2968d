import CourierDomain
import CourierPorts
import HTTPTypes
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

/// The response cache's durable store (decision 2510): a folder (`cache/` in the data
/// directory) holding an SQLite index, `index.sqlite`, and one file per body under `bodies/`.
///
/// - **Admission order.** A body is written to `bodies/.NAME.tmp`, synced, and renamed to
///   `bodies/NAME` inside the index's write transaction, which then commits; the files of the
///   entries it replaced or evicted are unlinked after the commit. A kill at any point leaves
///   either no entry or a whole one: a temporary file or a named file no row points to is an
///   orphan, swept at the next open (named files under the write lock, so no other process is
///   between its rename and its commit; temporary files once they are ten minutes old).
/// - **Budget.** Every admission keeps the sum of the bodies within `budget` bytes, evicting
///   least-recently-used entries first, never a pinned one nor one whose URL `protected`
///   names (what pending writes reference); an admission that cannot fit is refused.
/// - **Damage.** An index SQLite cannot read is deleted with the bodies and started afresh
///   (everything here can be fetched again), and `warn` is told; nothing outside the folder is
///   touched.
package final class SQLiteResponseCache: ResponseCacheStore {
  /// The folder.
  package let directory: String
  /// The most bytes the bodies may take together.
  package let budget: Int
  private let protected: @Sendable () -> Set<String>
  private let locked: Mutex<SQLiteConnection?>
  private var bodies: String { directory + "/bodies" }
  private static let schemaVersion: Int64 = 1
  private static let orphanAge: TimeInterval = 600

  /// Opens (or creates) the cache in `directory`, sweeping orphans.
  /// - Parameters:
  ///   - directory: the cache folder; created 0700 when missing (its parent must exist).
  ///   - budget: the most bytes the bodies may take together.
  ///   - protected: the URLs pending writes reference, asked at each eviction: never evicted.
  ///   - warn: told when a damaged index was started afresh.
  /// - Throws: `StoreError` naming the file: `cannotCreate`, `io`, `newerSchema`, `busy`.
  package init(
    directory: String, budget: Int, protected: @escaping @Sendable () -> Set<String> = { [] },
    warn: (String) -> Void = { _ in }
  ) throws {
    self.directory = directory
    self.budget = budget
    self.protected = protected
    try Self.makeFolder(directory)
    try Self.makeFolder(directory + "/bodies")
    let index = directory + "/index.sqlite"
    let connection: SQLiteConnection
    do {
      connection = try Self.open(index)
    } catch let error as StoreError where error.code == .corrupt {
      warn(
        "the response cache's index \(index) was damaged; it was started afresh "
          + "(\(error.underlying ?? error.message)).")
      for suffix in ["", "-wal", "-shm", "-journal"] { unlink(index + suffix) }
      for name in Self.names(in: directory + "/bodies") {
        unlink(directory + "/bodies/" + name)
      }
      connection = try Self.open(index)
    }
    locked = Mutex(connection)
    try sweep()
  }

  deinit { locked.withLock { $0?.close() } }

  /// Makes the folder 0700, or makes an existing one 0700 (its replies are the user's alone;
  /// the folder is the cache's own, so no one is warned).
  private static func makeFolder(_ path: String) throws {
    if mkdir(path, 0o700) != 0 {
      let code = errno
      var info = stat()
      guard code == EEXIST, lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
        throw StoreError(
          .cannotCreate, "The response cache folder \(path) could not be created.", path: path,
          underlying: String(cString: strerror(code == EEXIST ? ENOTDIR : code)))
      }
      if info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
    } else {
      // The umask may have narrowed 0700; never widened it. Set it exactly anyway.
      _ = chmod(path, 0o700)
    }
  }

  private static func open(_ path: String) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: path)
    do {
      connection.setBusyTimeout(5_000)
      let version = try connection.query("PRAGMA user_version") { $0.int(0) ?? 0 }.first ?? 0
      if version > schemaVersion {
        throw StoreError(
          .newerSchema,
          "The response cache \(path) was written by a newer version of Courier; it was left "
            + "as it is.", path: path)
      }
      _ = try connection.query("PRAGMA journal_mode=WAL") { $0.text(0) }
      // A cache may lose its last admissions on power loss; never its consistency.
      try connection.exec("PRAGMA synchronous=NORMAL")
      if version < schemaVersion {
        try connection.beginImmediate()
        do {
          try connection.exec(
            """
            CREATE TABLE IF NOT EXISTS entries (
              id INTEGER PRIMARY KEY, partition TEXT NOT NULL, url TEXT NOT NULL,
              vary TEXT NOT NULL, status INTEGER NOT NULL, fields TEXT NOT NULL,
              file TEXT NOT NULL, size INTEGER NOT NULL, stored_at REAL NOT NULL,
              last_used REAL NOT NULL, pinned INTEGER NOT NULL DEFAULT 0, etag TEXT,
              last_modified TEXT, UNIQUE (partition, url, vary));
            CREATE INDEX IF NOT EXISTS entries_by_use ON entries (last_used, id);
            PRAGMA user_version=1;
            """)
          try connection.exec("COMMIT")
        } catch {
          try? connection.exec("ROLLBACK")
          throw error
        }
      }
      return connection
    } catch {
      connection.close()
      throw error
    }
  }

  private func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
    try locked.withLock { connection throws -> T in
      guard let connection else {
        throw StoreError(.unusable, "The response cache is closed.", path: directory)
      }
      return try body(connection)
    }
  }

  /// Runs `body` in one write transaction; the files it returns are unlinked after the commit.
  private func writing<T: Sendable>(_ body: (SQLiteConnection) throws -> (T, [String])) throws -> T
  {
    let (value, unlinked) = try withConnection { connection in
      try connection.beginImmediate()
      do {
        let result = try body(connection)
        try connection.exec("COMMIT")
        return result
      } catch {
        try? connection.exec("ROLLBACK")
        throw error
      }
    }
    for name in unlinked { unlink(bodies + "/" + name) }
    return value
  }

  /// Removes body files no entry names and entries whose file is gone, under the write lock.
  private func sweep() throws {
    let cutoff = Date().timeIntervalSince1970 - Self.orphanAge
    try writing { connection in
      let files = Set(try connection.query("SELECT file FROM entries") { $0.text(0) ?? "" })
      let present = Set(Self.names(in: bodies))
      var orphans: [String] = []
      for name in present where !files.contains(name) {
        if name.hasPrefix(".") {
          var info = stat()
          if lstat(bodies + "/" + name, &info) == 0, Double(info.st_mtim.tv_sec) > cutoff {
            continue
          }
        }
        orphans.append(name)
      }
      for file in files where !present.contains(file) {
        try connection.run("DELETE FROM entries WHERE file = ?", [.text(file)])
      }
      return ((), orphans)
    }
  }

  static func names(in folder: String) -> [String] {
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  // MARK: - Reading

  private static let columns =
    "id, partition, url, vary, status, fields, size, stored_at, last_used, pinned, file"

  private static func entry(_ row: SQLiteRow) -> (CachedResponse, String) {
    let entry = CachedResponse(
      id: row.int(0) ?? 0, partition: row.text(1) ?? "", url: row.text(2) ?? "",
      varyValues: decodeVary(row.text(3) ?? ""), status: Int(row.int(4) ?? 0),
      fields: decodeFields(row.text(5) ?? ""), size: Int(row.int(6) ?? 0),
      storedAt: Date(timeIntervalSinceReferenceDate: row.double(7) ?? 0),
      lastUsed: Date(timeIntervalSinceReferenceDate: row.double(8) ?? 0),
      pinned: (row.int(9) ?? 0) != 0)
    return (entry, row.text(10) ?? "")
  }

  package func entries(partition: String, url: String) throws -> [CachedResponse] {
    try withConnection { connection in
      try connection.query(
        "SELECT \(Self.columns) FROM entries WHERE partition = ? AND url = ?",
        [.text(partition), .text(url)]
      ) { Self.entry($0).0 }
    }
  }

  /// Every entry, least recently used first (for tests and `courier` diagnostics).
  package func allEntries() throws -> [CachedResponse] {
    try withConnection { connection in
      try connection.query("SELECT \(Self.columns) FROM entries ORDER BY last_used, id") {
        Self.entry($0).0
      }
    }
  }

  /// The bytes the bodies take together.
  package func totalBytes() throws -> Int {
    try withConnection { connection in
      Int(
        try connection.query("SELECT COALESCE(SUM(size), 0) FROM entries") { $0.int(0) ?? 0 }
          .first ?? 0)
    }
  }

  /// The path of an entry's body file, for a reader that streams it (a downloaded photo).
  package func bodyPath(of entry: CachedResponse) throws -> String? {
    try withConnection { connection in
      try connection.query("SELECT file FROM entries WHERE id = ?", [.int(entry.id)]) {
        $0.text(0)
      }.first.flatMap { $0 }.map { bodies + "/" + $0 }
    }
  }

  package func body(of entry: CachedResponse) throws -> Data {
    guard let path = try bodyPath(of: entry) else {
      throw StoreError(.notFound, "The response cache has no such entry.", path: directory)
    }
    do {
      let file = try OpenFileReader(path)
      return try file.readAll()
    } catch {
      _ = try? writing { connection in
        try connection.run("DELETE FROM entries WHERE id = ?", [.int(entry.id)])
        return ((), [String]())
      }
      throw error
    }
  }

  // MARK: - Writing

  @discardableResult
  package func store(
    partition: String, url: String, varyValues: [String: String], status: Int,
    fields: HTTPFields, body: Data, now: Date
  ) throws -> CachedResponse {
    let name = Self.newName()
    let temporary = bodies + "/." + name + ".tmp"
    try Self.write(body, to: temporary)
    do {
      return try admitRenaming(
        temporary, name: name, size: body.count, partition: partition, url: url,
        varyValues: varyValues, status: status, fields: fields, pinned: false, now: now)
    } catch {
      unlink(temporary)
      throw error
    }
  }

  /// Moves a finished file into the cache as the 200 reply of `url` (a download made
  /// elsewhere, in the same file system): renamed, not copied; on refusal it is left where it
  /// was.
  /// - Parameters:
  ///   - path: the file.
  ///   - partition: whose it is (decision 2513).
  ///   - url: the URL it was fetched from, absolute.
  ///   - fields: the reply's header fields (its `ETag`, `Last-Modified`, `Content-Type`, …).
  ///   - pinned: whether it is pinned at once.
  ///   - now: the time of the admission.
  /// - Returns: the entry.
  /// - Throws: `StoreError`: `invalidInput` when it cannot fit the budget without evicting a
  ///   pinned or protected entry, `io` when it cannot be read or moved.
  @discardableResult
  package func admit(
    fileAt path: String, partition: String, url: String, fields: HTTPFields,
    pinned: Bool = false, now: Date
  ) throws -> CachedResponse {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      throw StoreError(
        .io, "The file \(path) cannot be admitted to the response cache: it is not a file.",
        path: path, underlying: String(cString: strerror(errno)))
    }
    return try admitRenaming(
      path, name: Self.newName(), size: Int(info.st_size), partition: partition, url: url,
      varyValues: [:], status: 200, fields: fields, pinned: pinned, now: now)
  }

  private func admitRenaming(
    _ source: String, name: String, size: Int, partition: String, url: String,
    varyValues: [String: String], status: Int, fields: HTTPFields, pinned: Bool, now: Date
  ) throws -> CachedResponse {
    let vary = Self.encodeVary(varyValues)
    if size > budget {
      throw StoreError(
        .invalidInput,
        "The response cache refused \(url): its \(size) bytes exceed the whole budget of "
          + "\(budget) bytes.", path: directory)
    }
    let kept = protected()
    return try writing { connection in
      var freed: [String] = []
      // The entry it replaces goes first: its bytes do not count against the new one.
      let replaced = try connection.query(
        "SELECT id, file, size, pinned FROM entries WHERE partition = ? AND url = ? AND vary = ?",
        [.text(partition), .text(url), .text(vary)]
      ) { ($0.int(0) ?? 0, $0.text(1) ?? "", $0.int(2) ?? 0, ($0.int(3) ?? 0) != 0) }
      let keepsPin = replaced.contains { $0.3 }
      for old in replaced {
        try connection.run("DELETE FROM entries WHERE id = ?", [.int(old.0)])
        freed.append(old.1)
      }
      var total = Int(
        try connection.query("SELECT COALESCE(SUM(size), 0) FROM entries") { $0.int(0) ?? 0 }
          .first ?? 0)
      if total + size > budget {
        let candidates = try connection.query(
          "SELECT id, url, file, size FROM entries WHERE pinned = 0 ORDER BY last_used, id"
        ) { ($0.int(0) ?? 0, $0.text(1) ?? "", $0.text(2) ?? "", Int($0.int(3) ?? 0)) }
        var evicted: [(Int64, String)] = []
        for candidate in candidates where total + size > budget && !kept.contains(candidate.1) {
          evicted.append((candidate.0, candidate.2))
          total -= candidate.3
        }
        guard total + size <= budget else {
          throw StoreError(
            .invalidInput,
            "The response cache refused \(url) (\(size) bytes): the budget of \(budget) bytes "
              + "is held by pinned entries and files pending writes need.", path: directory)
        }
        for (id, file) in evicted {
          try connection.run("DELETE FROM entries WHERE id = ?", [.int(id)])
          freed.append(file)
        }
      }
      guard rename(source, bodies + "/" + name) == 0 else {
        throw StoreError(
          .io, "The response cache could not move \(source) into \(bodies).", path: source,
          underlying: String(cString: strerror(errno)))
      }
      Self.syncFolder(bodies)
      let stamp = now.timeIntervalSinceReferenceDate
      do {
        try connection.run(
          """
          INSERT INTO entries (partition, url, vary, status, fields, file, size, stored_at,
            last_used, pinned, etag, last_modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """,
          [
            .text(partition), .text(url), .text(vary), .int(Int64(status)),
            .text(Self.encodeFields(fields)), .text(name), .int(Int64(size)), .double(stamp),
            .double(stamp), .int(pinned || keepsPin ? 1 : 0),
            fields[.eTag].map { .text($0) } ?? .null,
            fields[.lastModified].map { .text($0) } ?? .null,
          ])
      } catch {
        // Back where it came from, so a refused download is still the caller's.
        rename(bodies + "/" + name, source)
        throw error
      }
      let entry = CachedResponse(
        id: Int64(
          try connection.query("SELECT last_insert_rowid()") { $0.int(0) ?? 0 }
            .first ?? 0),
        partition: partition, url: url, varyValues: varyValues, status: status,
        fields: fields, size: size, storedAt: now, lastUsed: now, pinned: pinned || keepsPin)
      return (entry, freed)
    }
  }

  package func refresh(_ entry: CachedResponse, fields: HTTPFields, now: Date) throws {
    try writing { connection in
      let stamp = now.timeIntervalSinceReferenceDate
      try connection.run(
        """
        UPDATE entries SET fields = ?, stored_at = ?, last_used = ?, etag = ?,
          last_modified = ? WHERE id = ?
        """,
        [
          .text(Self.encodeFields(fields)), .double(stamp), .double(stamp),
          fields[.eTag].map { .text($0) } ?? .null,
          fields[.lastModified].map { .text($0) } ?? .null, .int(entry.id),
        ])
      return ((), [String]())
    }
  }

  package func touch(_ entry: CachedResponse, now: Date) throws {
    try writing { connection in
      try connection.run(
        "UPDATE entries SET last_used = ? WHERE id = ?",
        [.double(now.timeIntervalSinceReferenceDate), .int(entry.id)])
      return ((), [String]())
    }
  }

  package func invalidate(partition: String, url: String) throws {
    try writing { connection in
      let files = try connection.query(
        "SELECT file FROM entries WHERE partition = ? AND url = ? AND pinned = 0",
        [.text(partition), .text(url)]
      ) { $0.text(0) ?? "" }
      try connection.run(
        "DELETE FROM entries WHERE partition = ? AND url = ? AND pinned = 0",
        [.text(partition), .text(url)])
      return ((), files)
    }
  }

  /// Pins or unpins the entries of a URL: a pinned entry is never evicted.
  /// - Returns: how many entries changed.
  @discardableResult
  package func setPinned(_ pinned: Bool, partition: String, url: String) throws -> Int {
    try writing { connection in
      let count = try connection.run(
        "UPDATE entries SET pinned = ? WHERE partition = ? AND url = ?",
        [.int(pinned ? 1 : 0), .text(partition), .text(url)])
      return (count, [String]())
    }
  }

  /// Removes every entry `keeping` does not keep, pinned ones too (a sign-in change:
  /// decisions 2513 and 2505).
  /// - Parameter keeping: whether an entry stays; none by default.
  package func removeAll(keeping: (CachedResponse) -> Bool = { _ in false }) throws {
    try writing { connection in
      let gone = try connection.query("SELECT \(Self.columns) FROM entries") { Self.entry($0) }
        .filter { !keeping($0.0) }
      for (entry, _) in gone {
        try connection.run("DELETE FROM entries WHERE id = ?", [.int(entry.id)])
      }
      return ((), gone.map(\.1))
    }
  }
}
