import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The schema, as migrations: migration `n` takes `user_version` from `n` to `n + 1`. Only
/// ever append; a released migration is never edited.
enum SQLiteSchema {
  static let migrations: [String] = [
    """
    CREATE TABLE records(
      collection TEXT NOT NULL,
      id TEXT NOT NULL,
      payload TEXT,
      state TEXT NOT NULL CHECK (state IN ('synced', 'created', 'modified', 'deleted')),
      server_payload TEXT,
      server_version INTEGER,
      server_updated_at REAL,
      PRIMARY KEY (collection, id)
    ) WITHOUT ROWID;
    CREATE TABLE collections(
      name TEXT PRIMARY KEY NOT NULL,
      etag TEXT,
      last_refresh REAL
    ) WITHOUT ROWID;
    CREATE TABLE outbox(
      sequence INTEGER PRIMARY KEY,
      operation_id TEXT NOT NULL UNIQUE,
      collection TEXT NOT NULL,
      record_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'delete')),
      payload TEXT,
      base_version INTEGER,
      enqueued_at REAL NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'rejected', 'conflicted')),
      reject_message TEXT,
      reject_code TEXT,
      conflict_record TEXT,
      attempts INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX outbox_by_record ON outbox(collection, record_id, sequence);
    CREATE TABLE counters(name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO counters(name, value) VALUES ('next_sequence', 1);
    """,
    // 1 → 2: the fields of the server's copy each write started from (decision 1201); NULL
    // for the entries written before, which then merge against the record's server copy.
    """
    ALTER TABLE outbox ADD COLUMN base_payload TEXT;
    """,
    // 2 → 3: parked entries (decision 2401): `state` may be 'parked', its reason and code in
    // `reject_message` and `reject_code`. SQLite cannot widen a CHECK in place: the table is
    // written again, rows, numbers and index as they were.
    """
    CREATE TABLE outbox_v3(
      sequence INTEGER PRIMARY KEY,
      operation_id TEXT NOT NULL UNIQUE,
      collection TEXT NOT NULL,
      record_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'delete')),
      payload TEXT,
      base_version INTEGER,
      enqueued_at REAL NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'rejected', 'conflicted', 'parked')),
      reject_message TEXT,
      reject_code TEXT,
      conflict_record TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      base_payload TEXT
    );
    INSERT INTO outbox_v3(sequence, operation_id, collection, record_id, kind, payload,
      base_version, enqueued_at, state, reject_message, reject_code, conflict_record, attempts,
      base_payload)
    SELECT sequence, operation_id, collection, record_id, kind, payload, base_version,
      enqueued_at, state, reject_message, reject_code, conflict_record, attempts, base_payload
    FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_v3 RENAME TO outbox;
    CREATE INDEX outbox_by_record ON outbox(collection, record_id, sequence);
    """,
  ]
}

/// Reads rows into domain values; a row that does not decode is reported as damage.
struct SQLiteReader: LocalStoreReader {
  let connection: SQLiteConnection

  static let recordColumns =
    "collection, id, payload, state, server_payload, server_version, server_updated_at"
  static let entryColumns =
    "sequence, operation_id, collection, record_id, kind, payload, base_version, enqueued_at, "
    + "state, reject_message, reject_code, conflict_record, attempts, base_payload"

  func damaged(_ what: String) -> StoreError {
    StoreError(
      .corrupt,
      "The local store \(connection.path) holds an unreadable row (\(what)); it was left as it is.",
      path: connection.path)
  }

  func json(_ text: String?, _ what: String) throws -> JSONValue? {
    guard let text else { return nil }
    do {
      return try JSONValue(parsing: text)
    } catch {
      throw damaged(what)
    }
  }

  func decodeRecord(_ row: SQLiteRow) throws -> LocalRecord {
    guard let collection = row.text(0), let id = row.text(1) else { throw damaged("records") }
    let key = RecordKey(collection: collection, id: id)
    guard let state = row.text(3).flatMap(LocalState.init(rawValue:)) else {
      throw damaged("records \(key)")
    }
    var server: ServerRecord?
    if let version = row.int(5) {
      guard let payload = try json(row.text(4), "records \(key)") else {
        throw damaged("records \(key)")
      }
      server = ServerRecord(
        id: id, payload: payload, version: Int(version),
        updatedAt: row.double(6).map(Date.init(timeIntervalSinceReferenceDate:)))
    }
    return LocalRecord(
      key: key, payload: try json(row.text(2), "records \(key)"), state: state, server: server)
  }

  func decodeEntry(_ row: SQLiteRow) throws -> OutboxEntry {
    let sequence = row.int(0) ?? 0
    let what = "outbox \(sequence)"
    guard let id = row.text(1).flatMap(Self.uuid), let collection = row.text(2),
      let recordID = row.text(3), let kind = row.text(4).flatMap(OutboxKind.init(rawValue:)),
      let enqueuedAt = row.double(7), let stateName = row.text(8), let attempts = row.int(12)
    else { throw damaged(what) }
    let state: OutboxEntryState
    switch stateName {
    case "pending": state = .pending
    case "rejected": state = .rejected(message: row.text(9) ?? "", code: row.text(10))
    case "conflicted":
      guard let record = try json(row.text(11), what) else { throw damaged(what) }
      state = .conflicted(serverRecord: record)
    case "parked": state = .parked(reason: row.text(9) ?? "", code: row.text(10))
    default: throw damaged(what)
    }
    let operation = OutboxOperation(
      id: id, key: RecordKey(collection: collection, id: recordID), kind: kind,
      payload: try json(row.text(5), what), baseVersion: row.int(6).map { Int($0) },
      enqueuedAt: Date(timeIntervalSinceReferenceDate: enqueuedAt),
      basePayload: try json(row.text(13), what))
    return OutboxEntry(
      sequence: sequence, operation: operation, state: state, attempts: Int(attempts))
  }

  /// An operation id as stored (`UUID.uuidString`: 36 characters, hyphens at 8, 13, 18 and
  /// 23), read without Foundation's parser, which goes through `sscanf` and cost about as much
  /// as decoding the rest of the row; anything else goes to `UUID(uuidString:)`.
  static func uuid(_ text: String) -> UUID? {
    var bytes = [UInt8](repeating: 0, count: 16)
    var count = 0
    var high: UInt8?
    for (offset, character) in text.utf8.enumerated() {
      if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
        guard character == UInt8(ascii: "-") else { return UUID(uuidString: text) }
        continue
      }
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
      default: return UUID(uuidString: text)
      }
      if let first = high {
        guard count < 16 else { return UUID(uuidString: text) }
        bytes[count] = first << 4 | nibble
        count += 1
        high = nil
      } else {
        high = nibble
      }
    }
    guard count == 16, high == nil else { return UUID(uuidString: text) }
    return UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }

  func record(_ key: RecordKey) throws -> LocalRecord? {
    try connection.query(
      "SELECT \(Self.recordColumns) FROM records WHERE collection = ? AND id = ?",
      [.text(key.collection), .text(key.id)], row: decodeRecord
    ).first
  }

  func records(in collection: String) throws -> [LocalRecord] {
    try connection.query(
      "SELECT \(Self.recordColumns) FROM records WHERE collection = ? ORDER BY id",
      [.text(collection)], row: decodeRecord)
  }

  func collectionState(_ collection: String) throws -> CollectionState {
    try connection.query(
      "SELECT etag, last_refresh FROM collections WHERE name = ?", [.text(collection)]
    ) { row in
      CollectionState(
        collection: collection, etag: row.text(0),
        lastRefresh: row.double(1).map(Date.init(timeIntervalSinceReferenceDate:)))
    }.first ?? CollectionState(collection: collection)
  }

  func entry(_ id: UUID) throws -> OutboxEntry? {
    try connection.query(
      "SELECT \(Self.entryColumns) FROM outbox WHERE operation_id = ?", [.text(id.uuidString)],
      row: decodeEntry
    ).first
  }

  func stamps(of ids: [UUID]) throws -> [UUID: OutboxStamp] {
    var stamps: [UUID: OutboxStamp] = [:]
    for id in ids {
      _ = try connection.query(
        "SELECT sequence, attempts, state FROM outbox WHERE operation_id = ?",
        [.text(id.uuidString)]
      ) { row in
        stamps[id] = OutboxStamp(
          sequence: row.int(0) ?? 0, attempts: Int(row.int(1) ?? 0),
          isPending: row.text(2) == "pending")
      }
    }
    return stamps
  }

  func entries(for key: RecordKey, except sequence: Int64) throws -> [OutboxEntry] {
    try connection.query(
      "SELECT \(Self.entryColumns) FROM outbox WHERE collection = ? AND record_id = ? "
        + "AND sequence != ? ORDER BY sequence",
      [.text(key.collection), .text(key.id), .int(sequence)], row: decodeEntry)
  }

  func entries(for key: RecordKey) throws -> [OutboxEntry] {
    // Most writes are of a record with nothing waiting (a new article; an edit of a synced
    // one): a look at the index answers them, where compiling the fourteen-column read costs
    // four times as much, once per process.
    let values: [SQLiteValue] = [.text(key.collection), .text(key.id)]
    let waiting = try connection.query(Self.anyEntryForRecord, values) { _ in true }
    guard !waiting.isEmpty else { return [] }
    return try connection.query(Self.entriesForRecord, values, row: decodeEntry)
  }

  func hasEntries(for key: RecordKey, except sequence: Int64) throws -> Bool {
    let found = try connection.query(
      "SELECT 1 FROM outbox WHERE collection = ? AND record_id = ? AND sequence != ? LIMIT 1",
      [.text(key.collection), .text(key.id), .int(sequence)]
    ) { _ in true }
    return !found.isEmpty
  }

  /// Whether a record has an entry in the outbox (the index alone).
  static let anyEntryForRecord =
    "SELECT 1 FROM outbox WHERE collection = ? AND record_id = ? LIMIT 1"

  /// A record's entries in queue order.
  static let entriesForRecord =
    "SELECT \(entryColumns) FROM outbox WHERE collection = ? AND record_id = ? ORDER BY sequence"

  func entries(in collection: String) throws -> [OutboxEntry] {
    try connection.query(
      "SELECT \(Self.entryColumns) FROM outbox WHERE collection = ? ORDER BY sequence",
      [.text(collection)], row: decodeEntry)
  }

  func entries(pendingOnly: Bool) throws -> [OutboxEntry] {
    let filter = pendingOnly ? "WHERE state = 'pending' " : ""
    return try connection.query(
      "SELECT \(Self.entryColumns) FROM outbox \(filter)ORDER BY sequence", row: decodeEntry)
  }

  func counts() throws -> OutboxCounts {
    // One pass with three filtered counts: `GROUP BY state` sorted the whole outbox first
    // (a sorter per call: twice the instructions for 90 entries).
    let rows = try connection.query(
      "SELECT count(*) FILTER (WHERE state = 'pending'), "
        + "count(*) FILTER (WHERE state = 'rejected'), "
        + "count(*) FILTER (WHERE state = 'conflicted'), "
        + "count(*) FILTER (WHERE state = 'parked') FROM outbox"
    ) { row in
      var counts = OutboxCounts(
        pending: Int(row.int(0) ?? 0), rejected: Int(row.int(1) ?? 0),
        conflicted: Int(row.int(2) ?? 0))
      counts.parked = Int(row.int(3) ?? 0)
      return counts
    }
    return rows.first ?? OutboxCounts()
  }

  func nextSequence() throws -> Int64 {
    try connection.query(
      "SELECT max((SELECT value FROM counters WHERE name = 'next_sequence'), "
        + "(SELECT coalesce(max(sequence), 0) + 1 FROM outbox))"
    ) { $0.int(0) ?? 1 }.first ?? 1
  }
}

/// Writes one mutation.
enum SQLiteWriter {
  static func apply(_ mutation: StoreMutation, on connection: SQLiteConnection) throws {
    switch mutation {
    case .putRecord(let record):
      try connection.run(
        "INSERT OR REPLACE INTO records(\(SQLiteReader.recordColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
          .text(record.key.collection), .text(record.key.id), text(record.payload),
          .text(record.state.rawValue), text(record.server?.payload),
          record.server.map { .int(Int64($0.version)) } ?? .null,
          date(record.server?.updatedAt),
        ])
    case .deleteRecord(let key):
      try connection.run(
        "DELETE FROM records WHERE collection = ? AND id = ?",
        [.text(key.collection), .text(key.id)])
    case .putCollection(let state):
      try connection.run(
        "INSERT OR REPLACE INTO collections(name, etag, last_refresh) VALUES (?, ?, ?)",
        [.text(state.collection), state.etag.map { .text($0) } ?? .null, date(state.lastRefresh)])
    case .insertEntry(let entry):
      try naming(entry, connection) { () throws(StoreError) in
        try connection.run(
          "INSERT INTO outbox(\(SQLiteReader.entryColumns)) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values(entry))
      }
    // No counter written: a waiting entry's number is covered by `max(sequence) + 1`
    // already (`nextSequence`), so the counter need only remember the numbers of entries
    // gone, and `deleteEntry` writes it. An add writes no counters page: one statement and
    // one page of the log fewer.
    case .replaceEntry(let entry):
      let row = values(entry)
      // Most replacements keep the entry's id and record (a rebase, a state): set only the
      // other columns, so neither index is rewritten (the outbox_by_record and operation_id
      // entries stay as they are: 45,000 such rebases in a replay of 10,000 queued edits).
      var changed = try connection.run(
        "UPDATE outbox SET kind = ?5, payload = ?6, base_version = ?7, enqueued_at = ?8, "
          + "state = ?9, reject_message = ?10, reject_code = ?11, conflict_record = ?12, "
          + "attempts = ?13, base_payload = ?14 WHERE sequence = ?1 AND operation_id = ?2 "
          + "AND collection = ?3 AND record_id = ?4", row)
      if changed == 0 {
        // A new operation id (a retry under a new key) or no such entry.
        changed = try naming(entry, connection) { () throws(StoreError) in
          try connection.run(
            "UPDATE outbox SET operation_id = ?2, collection = ?3, record_id = ?4, kind = ?5, "
              + "payload = ?6, base_version = ?7, enqueued_at = ?8, state = ?9, "
              + "reject_message = ?10, reject_code = ?11, conflict_record = ?12, attempts = ?13, "
              + "base_payload = ?14 WHERE sequence = ?1", row)
        }
      }
      if changed == 0 {
        throw StoreError(.notFound, "No outbox entry has sequence number \(entry.sequence).")
      }
    case .deleteEntry(let sequence):
      let changed = try connection.run(
        "DELETE FROM outbox WHERE sequence = ?", [.int(sequence)])
      if changed == 0 {
        throw StoreError(.notFound, "No outbox entry has sequence number \(sequence).")
      }
      // Never given again (see `insertEntry`), even when it was the last one.
      try connection.run(
        "UPDATE counters SET value = max(value, ?) WHERE name = 'next_sequence'",
        [.int(sequence + 1)])
    case .rebaseEntries(let rebase):
      // One statement for all the record's entries the completion moves (the record's index
      // finds them; no index is rewritten): neither a read of them nor an encoding of each.
      try connection.run(
        "UPDATE outbox SET base_version = ?, base_payload = ? WHERE collection = ? "
          + "AND record_id = ? AND sequence != ? AND state = 'pending' AND base_version IS ?",
        [
          .int(Int64(rebase.server.version)), text(rebase.server.payload),
          .text(rebase.key.collection), .text(rebase.key.id), .int(rebase.completed),
          rebase.fromVersion.map { .int(Int64($0)) } ?? .null,
        ])
    case .setAttempts(let sequence, let id, let attempts):
      let changed = try connection.run(
        "UPDATE outbox SET attempts = ? WHERE sequence = ? AND operation_id = ?",
        [.int(Int64(attempts)), .int(sequence), .text(id.uuidString)])
      if changed == 0 {
        throw StoreError(.notFound, "No outbox entry \(id) has sequence number \(sequence).")
      }
    }
  }

  /// Turns SQLite's constraint message into one naming the operation.
  @discardableResult
  private static func naming<T>(
    _ entry: OutboxEntry, _ connection: SQLiteConnection, _ body: () throws(StoreError) -> T
  ) throws(StoreError) -> T {
    do {
      return try body()
    } catch {
      guard error.code == .duplicate else { throw error }
      throw StoreError(
        .duplicate, "Operation \(entry.id) is already in the outbox.", path: connection.path,
        underlying: error.underlying)
    }
  }

  private static func text(_ json: JSONValue?) -> SQLiteValue {
    json.map { .text($0.jsonText) } ?? .null
  }

  private static func date(_ date: Date?) -> SQLiteValue {
    date.map { .double($0.timeIntervalSinceReferenceDate) } ?? .null
  }

  private static func values(_ entry: OutboxEntry) -> [SQLiteValue] {
    let operation = entry.operation
    var message: SQLiteValue = .null
    var code: SQLiteValue = .null
    var conflict: SQLiteValue = .null
    let state: String
    switch entry.state {
    case .pending: state = "pending"
    case .rejected(let text, let rejectCode):
      state = "rejected"
      message = .text(text)
      code = rejectCode.map { .text($0) } ?? .null
    case .conflicted(let record):
      state = "conflicted"
      conflict = .text(record.jsonText)
    case .parked(let reason, let parkCode):
      state = "parked"
      message = .text(reason)
      code = parkCode.map { .text($0) } ?? .null
    }
    return [
      .int(entry.sequence), .text(operation.id.uuidString), .text(operation.key.collection),
      .text(operation.key.id), .text(operation.kind.rawValue), text(operation.payload),
      operation.baseVersion.map { .int(Int64($0)) } ?? .null,
      .double(operation.enqueuedAt.timeIntervalSinceReferenceDate), .text(state), message, code,
      conflict, .int(Int64(entry.attempts)), text(operation.basePayload),
    ]
  }
}
