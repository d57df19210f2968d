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

/// A record store and outbox in plain files in one directory:
/// - `records.json`, a snapshot of the records, replaced atomically (temporary file, fsync,
///   rename, fsync of the directory) when a server refresh rewrites many records;
/// - `outbox.journal`, an append-only journal: one JSON line per transaction, synced before
///   the call returns. A local write and its outbox entry are one line, so they commit
///   together. When the journal grows, it is compacted: rewritten atomically with the live
///   entries only, after the records are folded into the snapshot.
///
/// On open, a torn last line (a crash mid-append) is dropped, as that call never returned; a
/// damaged line before the last is reported with the file and line, and nothing is changed.
/// A `lock` file held with `flock` keeps a second process out.
public final class FileLocalStore: LocalStore {
  /// Opening options.
  package struct Options: Sendable, Equatable {
    /// The journal size, in bytes, past which it is compacted (and at least twice its size
    /// after the last compaction, so a large outbox is not rewritten at every append).
    package var compactionThreshold: Int
    /// Record-only transactions with more mutations than this (a server refresh) rewrite the
    /// snapshot instead of adding a journal line.
    package var snapshotThreshold: Int
    /// How long opening waits for another process that has the store open before giving up
    /// with `StoreError.busy`.
    package var busyTimeout: Duration

    /// Creates options.
    /// - Parameters:
    ///   - compactionThreshold: the journal size that triggers a compaction.
    ///   - snapshotThreshold: the size of a record-only transaction that rewrites the snapshot.
    ///   - busyTimeout: how long opening waits for another process holding the store.
    package init(
      compactionThreshold: Int = 1 << 20, snapshotThreshold: Int = 64,
      busyTimeout: Duration = .seconds(30)
    ) {
      self.compactionThreshold = compactionThreshold
      self.snapshotThreshold = snapshotThreshold
      self.busyTimeout = busyTimeout
    }
  }

  /// What opening had to repair.
  package struct Recovery: Sendable, Equatable {
    /// Bytes of a torn last journal line that were dropped (0 when none).
    package var droppedTornBytes: Int
  }

  /// The journal format this code writes: 2, every JSON value (a payload, a server copy, a
  /// conflict's record) as its text in a JSON string, so that no number is rounded and no
  /// nesting is cut by the coders (decision 2428). Format 1 (JSON values as JSON) is read, and
  /// rewritten as 2 when the store opens.
  package static let journalFormat = 2
  /// The snapshot format this code writes (2, as the journal's).
  package static let snapshotFormat = 2

  /// The store's directory.
  package let directory: String
  /// The records snapshot.
  package var snapshotPath: String { directory + "/records.json" }
  /// The outbox journal.
  package var journalPath: String { directory + "/outbox.journal" }
  /// What opening repaired.
  package let recovery: Recovery

  private struct Core {
    var state: LocalStoreState
    var lastSequence: Int64
    var journal: Int32
    var lock: Int32
    var journalBytes: Int
    var compactedBytes: Int
    var broken: StoreError?
  }

  private let core: Mutex<Core>
  private let options: Options

  /// Opens (or creates) a store in a directory, which is created if needed: a snapshot of the
  /// records and a journal of changes, each flushed to disk before a call returns.
  /// - Parameter directory: the directory.
  /// - Throws: `StoreError` naming the file when it is damaged, newer, or cannot be created or
  ///   read, and when another process kept it open for longer than a few seconds.
  public convenience init(directory: String) throws {
    try self.init(directory: directory, options: Options())
  }

  /// Opens (or creates) a store in a directory, which is created if needed.
  /// - Parameters:
  ///   - directory: the directory.
  ///   - options: opening options.
  /// - Throws: `StoreError` naming the file: `corrupt` for a damaged snapshot or journal line
  ///   (with its line number), `newerSchema`, `io`, `cannotCreate`, and `busy` when another
  ///   process kept it open for longer than `options.busyTimeout`.
  package init(directory: String, options: Options) throws {
    self.directory = directory
    self.options = options
    try FileIO.makeDirectory(directory)
    let lockPath = directory + "/lock"
    let lock = try FileIO.open(lockPath, O_RDWR | O_CREAT, what: "opened")
    // Another process has it open (a command lasts seconds): wait for it, bounded, as SQLite
    // waits on its busy timeout, rather than fail a write the user just typed.
    let deadline = ContinuousClock.now.advanced(by: options.busyTimeout)
    while flock(lock, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      if code == EINTR { continue }
      if code != EWOULDBLOCK || ContinuousClock.now >= deadline {
        Glibc.close(lock)
        throw StoreError(
          code == EWOULDBLOCK ? .busy : .io,
          "The local store \(directory) is in use by another process.", path: lockPath,
          underlying: String(cString: strerror(code)))
      }
      usleep(10_000)
    }
    let olderFormat: Bool
    do {
      let loaded = try Self.load(
        directory: directory, snapshotPath: directory + "/records.json",
        journalPath: directory + "/outbox.journal")
      olderFormat = loaded.olderFormat
      recovery = Recovery(droppedTornBytes: loaded.dropped)
      let journal = try FileIO.open(
        directory + "/outbox.journal", O_WRONLY | O_APPEND, what: "opened")
      let bytes = FileIO.size(journal)
      core = Mutex(
        Core(
          state: loaded.state, lastSequence: loaded.lastSequence, journal: journal, lock: lock,
          journalBytes: bytes, compactedBytes: bytes, broken: nil))
    } catch {
      Self.release(lock)
      throw error
    }
    // A file of format 1 is rewritten in this code's format before anything is appended; if
    // that fails, the files are closed (by `close()`, once) and what the disk holds stays.
    if olderFormat {
      do {
        try compact()
      } catch {
        close()
        throw error
      }
    }
  }

  deinit {
    core.withLock { core in
      if core.journal >= 0 { Glibc.close(core.journal) }
      if core.lock >= 0 { Self.release(core.lock) }
    }
  }

  /// Unlocks, then closes, the lock file.
  ///
  /// A `flock` belongs to the open file description, not to the descriptor: a child that
  /// another thread is spawning holds a copy of every descriptor until its `exec` (even with
  /// `O_CLOEXEC`), and closing ours alone would leave the lock held until then. `LOCK_UN`
  /// releases it whatever copies exist.
  private static func release(_ lock: Int32) {
    _ = flock(lock, LOCK_UN)
    Glibc.close(lock)
  }

  /// Closes the files and releases the lock. Later calls throw `StoreError.unusable`.
  package func close() {
    core.withLock { core in
      if core.journal >= 0 { Glibc.close(core.journal) }
      if core.lock >= 0 { Self.release(core.lock) }
      core.journal = -1
      core.lock = -1
      core.broken = StoreError(.unusable, "The local store \(directory) is closed.")
    }
  }

  /// Runs a read against the store.
  /// - Parameter body: the read.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws, or `StoreError.unusable` once closed or broken.
  public func read<T: Sendable>(_ body: (any LocalStoreReader) throws -> T) throws -> T {
    let state = try core.withLock { core throws(StoreError) -> LocalStoreState in
      if let broken = core.broken { throw broken }
      return core.state
    }
    return try body(state)
  }

  /// Mutations as the journal holds them: a rebase as the entries it moves, each replaced
  /// whole, so the journal's format stays the one every Courier reads.
  /// - Parameters:
  ///   - mutations: the plan's mutations.
  ///   - state: the store before them.
  /// - Returns: the mutations to journal (the same when none is a rebase).
  /// - Throws: the `StoreError` applying them would throw.
  private static func journalForm(_ mutations: [StoreMutation], on state: LocalStoreState)
    throws(StoreError) -> [StoreMutation]
  {
    let rebases = mutations.contains { mutation in
      if case .rebaseEntries = mutation { return true }
      return false
    }
    guard rebases else { return mutations }
    var scratch = state
    var journalled: [StoreMutation] = []
    for mutation in mutations {
      if case .rebaseEntries(let rebase) = mutation {
        let moved = scratch.entries(for: rebase.key).compactMap(rebase.rebased)
        journalled += moved.map(StoreMutation.replaceEntry)
      } else {
        journalled.append(mutation)
      }
      try scratch.apply([mutation])
    }
    return journalled
  }

  /// Runs a write: one journal line (or a snapshot rewrite), synced before it returns.
  /// - Parameter body: reads and plans.
  /// - Returns: the plan's result.
  /// - Throws: what `body` throws, a mutation's `StoreError`, or an I/O `StoreError` after
  ///   which the store must be reopened (what reached the disk is then the truth).
  public func write<T: Sendable>(_ body: (any LocalStoreReader) throws -> StorePlan<T>) throws
    -> T
  {
    try core.withLock { core throws -> T in
      if let broken = core.broken { throw broken }
      let plan = try body(core.state)
      if plan.mutations.isEmpty { return plan.result }
      let expanded = try Self.journalForm(plan.mutations, on: core.state)
      try core.state.apply(plan.mutations)
      do {
        let touchesOutbox = plan.mutations.contains { mutation in
          switch mutation {
          case .insertEntry, .replaceEntry, .deleteEntry, .setAttempts, .rebaseEntries: return true
          case .putRecord, .deleteRecord, .putCollection: return false
          }
        }
        if touchesOutbox || plan.mutations.count <= options.snapshotThreshold {
          core.lastSequence += 1
          // An attempt count is journalled as the whole entry: the journal's format stays the
          // one every Courier reads.
          let journalled = expanded.map { mutation -> StoreMutation in
            guard case .setAttempts(let sequence, _, _) = mutation,
              let entry = core.state.entriesBySequence[sequence]
            else { return mutation }
            return .replaceEntry(entry)
          }
          try append(JournalLine(seq: core.lastSequence, next: nil, m: journalled), &core)
          if core.journalBytes > max(options.compactionThreshold, 2 * core.compactedBytes) {
            try compact(&core)
          }
        } else {
          try writeSnapshot(core)
        }
      } catch {
        // Memory is now ahead of the disk (or a line is half written): refuse everything
        // until the store is reopened from what the disk holds.
        core.broken = StoreError(
          .unusable,
          "A write to the local store \(directory) failed; reopen it to continue.",
          path: directory, underlying: "\(error)")
        throw error
      }
      return plan.result
    }
  }

  /// Compacts the journal now (normally done when it grows past the threshold).
  /// - Throws: `StoreError` when the files cannot be written; the store must then be reopened.
  package func compact() throws {
    try core.withLock { core throws in
      if let broken = core.broken { throw broken }
      do {
        try compact(&core)
      } catch {
        core.broken = StoreError(
          .unusable, "Compacting the local store \(directory) failed; reopen it to continue.",
          path: directory, underlying: "\(error)")
        throw error
      }
    }
  }

  /// The journal's current size in bytes.
  package var journalSize: Int { core.withLock { $0.journalBytes } }

  private func append(_ line: JournalLine, _ core: inout Core) throws {
    let bytes = try Self.encode(line) + [0x0A]
    try FileIO.writeAll(core.journal, bytes, path: journalPath)
    try FileIO.dataSync(core.journal, path: journalPath)
    core.journalBytes += bytes.count
  }

  private func writeSnapshot(_ core: Core) throws {
    let snapshot = Snapshot(
      format: Self.snapshotFormat, journalSequence: core.lastSequence,
      records: core.state.records.values.sorted { $0.key < $1.key },
      collections: core.state.collections.values.sorted { $0.collection < $1.collection })
    try FileIO.replace(snapshotPath, with: try Self.encode(snapshot), directory: directory)
  }

  /// Folds the records into the snapshot, then rewrites the journal with the live entries
  /// only. In that order: a crash in between leaves a snapshot that already holds every
  /// journalled record change (skipped on replay) and the full old journal.
  private func compact(_ core: inout Core) throws {
    try writeSnapshot(core)
    let live = JournalLine(
      seq: core.lastSequence, next: core.state.nextSequence,
      m: core.state.orderedEntries().map { .insertEntry($0) })
    let bytes =
      try Self.encode(JournalHeader(courierJournal: Self.journalFormat)) + [0x0A]
      + Self.encode(live) + [0x0A]
    try FileIO.replace(journalPath, with: bytes, directory: directory)
    Glibc.close(core.journal)
    core.journal = -1
    core.journal = try FileIO.open(journalPath, O_WRONLY | O_APPEND, what: "opened")
    core.journalBytes = bytes.count
    core.compactedBytes = bytes.count
  }

  private static func encode(_ value: some Encodable) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.userInfo[JSONValue.codedAsText] = true
    return Array(try encoder.encode(value))
  }

  /// The decoder of a file of `format`: from 2 on, JSON values are read from their text.
  private static func decoder(format: Int) -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.userInfo[JSONValue.codedAsText] = format >= 2
    return decoder
  }

  private static func load(directory: String, snapshotPath: String, journalPath: String) throws
    -> (state: LocalStoreState, lastSequence: Int64, dropped: Int, olderFormat: Bool)
  {
    var state = LocalStoreState()
    var snapshotSequence: Int64 = 0
    var olderFormat = false
    if FileIO.exists(snapshotPath) {
      let bytes = try FileIO.readAll(snapshotPath)
      let snapshot: Snapshot
      let format = try? JSONDecoder().decode(FormatProbe.self, from: Data(bytes)).format
      do {
        snapshot = try decoder(format: format ?? snapshotFormat).decode(
          Snapshot.self, from: Data(bytes))
      } catch {
        if let format, format > snapshotFormat {
          throw newer(snapshotPath, format)
        }
        throw StoreError(
          .corrupt,
          "The local store file \(snapshotPath) is damaged; it was left as it is. Move the "
            + "directory aside to start afresh, or restore it from a backup.",
          path: snapshotPath, underlying: "\(error)")
      }
      if snapshot.format > snapshotFormat { throw newer(snapshotPath, snapshot.format) }
      olderFormat = snapshot.format < snapshotFormat
      snapshotSequence = snapshot.journalSequence
      try state.apply(
        snapshot.records.map { .putRecord($0) } + snapshot.collections.map { .putCollection($0) })
    }
    if !FileIO.exists(journalPath) {
      if snapshotSequence > 0 {
        // The journal existed before any snapshot was written: its absence is a loss of the
        // outbox, to report rather than start over.
        throw StoreError(
          .corrupt,
          "The outbox journal \(journalPath) is missing beside \(snapshotPath); nothing was "
            + "changed. Restore it from a backup, or move the directory aside to start afresh.",
          path: journalPath)
      }
      let header = try encode(JournalHeader(courierJournal: journalFormat)) + [0x0A]
      try FileIO.replace(journalPath, with: header, directory: directory)
    }
    let bytes = try FileIO.readAll(journalPath)
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    // The text after the last newline is a torn append (empty when the file ends cleanly).
    var keptBytes = bytes.count - (lines.last?.count ?? 0)
    let complete = Array(lines.dropLast())
    var lastSequence = snapshotSequence
    guard let first = complete.first else {
      throw damaged(journalPath, line: 1, "it does not start with a Courier journal header")
    }
    let header: JournalHeader
    do {
      header = try JSONDecoder().decode(JournalHeader.self, from: Data(first))
    } catch {
      throw damaged(journalPath, line: 1, "it does not start with a Courier journal header")
    }
    if header.courierJournal > journalFormat { throw newer(journalPath, header.courierJournal) }
    olderFormat = olderFormat || header.courierJournal < journalFormat
    let lineDecoder = decoder(format: header.courierJournal)
    var parsed: [JournalLine] = []
    for (index, text) in complete.enumerated().dropFirst() {
      do {
        parsed.append(try lineDecoder.decode(JournalLine.self, from: Data(text)))
      } catch {
        if index == complete.count - 1, lines.last?.isEmpty == true {
          // A last line that does not parse, with nothing after it, is a torn append whose
          // newline reached the disk (a crash can tear one append only: each is synced before
          // the next starts).
          keptBytes -= text.count + 1
          break
        }
        throw damaged(journalPath, line: index + 1, "the line is not valid")
      }
    }
    for (offset, line) in parsed.enumerated() {
      let isRecordChange: (StoreMutation) -> Bool = { mutation in
        switch mutation {
        case .putRecord, .deleteRecord, .putCollection: return true
        case .insertEntry, .replaceEntry, .deleteEntry, .setAttempts, .rebaseEntries: return false
        }
      }
      let replayed = line.m.filter { !isRecordChange($0) || line.seq > snapshotSequence }
      do {
        try state.apply(replayed)
      } catch {
        throw damaged(journalPath, line: offset + 2, "it does not follow from the lines before")
      }
      if let next = line.next { state.raiseNextSequence(to: next) }
      lastSequence = max(lastSequence, line.seq)
    }
    let dropped = bytes.count - keptBytes
    if dropped > 0 {
      let fd = try FileIO.open(journalPath, O_WRONLY, what: "opened")
      defer { Glibc.close(fd) }
      if ftruncate(fd, off_t(keptBytes)) != 0 { throw FileIO.failure("repaired", journalPath) }
      if fsync(fd) != 0 { throw FileIO.failure("flushed to disk", journalPath) }
    }
    return (state, lastSequence, dropped, olderFormat)
  }

  private static func damaged(_ path: String, line: Int, _ why: String) -> StoreError {
    StoreError(
      .corrupt,
      "The outbox journal \(path) is damaged at line \(line) (\(why)); it was left as it is. "
        + "Move the directory aside to start afresh, or restore it from a backup.",
      path: path, line: line)
  }

  private static func newer(_ path: String, _ format: Int) -> StoreError {
    StoreError(
      .newerSchema,
      "The local store file \(path) was written by a newer version of Courier (format "
        + "\(format)); it was left as it is.", path: path)
  }
}

/// The journal's first line.
struct JournalHeader: Codable {
  var courierJournal: Int
}

/// One committed transaction. `next` restores the outbox's sequence counter after a compaction.
struct JournalLine: Codable {
  var seq: Int64
  var next: Int64?
  var m: [StoreMutation]
}

/// The records snapshot; `journalSequence` is the last journal line already folded in.
struct Snapshot: Codable {
  var format: Int
  var journalSequence: Int64
  var records: [LocalRecord]
  var collections: [CollectionState]
}

/// Reads only the format of a snapshot that does not decode, to tell "newer" from "damaged".
struct FormatProbe: Codable {
  var format: Int
}
