import Foundation

/// A record type the sync engine can keep in sync: its collection, how its JSON carries id,
/// version and update time, and a typed view over a local record. `Article` is one.
public protocol SyncRecord: Sendable {
  /// The collection (the server path `/<collection>`).
  static var collection: String { get }
  /// How the server's JSON carries id, version and update time.
  static var schema: RecordSchema { get }
  /// The record's id.
  var id: String { get }
  /// The fields the client owns, sent in a create or update.
  var payload: JSONValue { get }
  /// Reads the typed record a local record shows.
  /// - Parameter record: a local record of the collection, not deleted.
  /// - Throws: `CourierError` of kind `decoding` naming the bad member.
  init(record: LocalRecord) throws
}

extension Article: SyncRecord {
  /// The contract's names.
  public static var schema: RecordSchema { .standard }
}

/// A record as the sync engine shows it: the typed value with its local state.
public struct SyncItem<Record: SyncRecord>: Sendable {
  /// The typed record (local payload, server version).
  public var value: Record
  /// Synced, created, or modified locally.
  public var state: LocalState

  /// Creates an item.
  /// - Parameters:
  ///   - value: the record.
  ///   - state: its state.
  public init(value: Record, state: LocalState) {
    self.value = value
    self.state = state
  }
}

/// A list of records as shown at one moment: from the cache (possibly stale) or just
/// refreshed from the network, or the cache kept because the refresh failed.
public struct SyncSnapshot<Record: SyncRecord>: Sendable {
  /// Where the list comes from.
  public enum Source: String, Sendable, Equatable {
    /// The local store, before asking the server.
    case cache
    /// The local store after a refresh (a 200 or a 304), or after a failed one (`error`).
    case network
  }

  /// Where the list comes from.
  public var source: Source
  /// The records shown, sorted by id; local deletions are left out.
  public var items: [SyncItem<Record>]
  /// Records deleted locally whose deletion is not confirmed yet.
  public var deletedIDs: [String]
  /// Records the store holds but that could not be read as `Record` (named in the error).
  public var unreadable: [String]
  /// When the list was last confirmed fresh by the server; nil when never.
  public var lastRefresh: Date?
  /// The list's age at the time of the snapshot (now − lastRefresh), nil when never refreshed.
  public var age: TimeInterval?
  /// For a network snapshot: whether the server answered 304 (nothing changed).
  public var notModified: Bool
  /// For a network snapshot: why the refresh failed (the cache is kept, untouched).
  public var error: CourierError?

  /// Creates a snapshot.
  /// - Parameters:
  ///   - source: cache or network.
  ///   - items: the records.
  ///   - deletedIDs: local deletions.
  ///   - unreadable: unreadable record ids.
  ///   - lastRefresh: the last confirmation.
  ///   - age: the age.
  ///   - notModified: whether a 304 came.
  ///   - error: the refresh failure.
  public init(
    source: Source, items: [SyncItem<Record>], deletedIDs: [String] = [], unreadable: [String] = [],
    lastRefresh: Date?, age: TimeInterval?, notModified: Bool = false,
    error: CourierError? = nil
  ) {
    self.source = source
    self.items = items
    self.deletedIDs = deletedIDs
    self.unreadable = unreadable
    self.lastRefresh = lastRefresh
    self.age = age
    self.notModified = notModified
    self.error = error
  }

  /// Whether the list shown may be out of date (from the cache, or a failed refresh).
  public var isStale: Bool { source == .cache || error != nil }
}

/// What a local write did: the optimistic record and what waits in the outbox.
public struct WriteReceipt: Sendable, Equatable {
  /// The record written.
  public var key: RecordKey
  /// The operation id (its `Idempotency-Key`), or nil when the write cancelled an unsent one.
  public var operationID: UUID?
  /// What happened to the queue.
  public var enqueue: EnqueueResult
  /// The record as shown after the write (nil when gone).
  public var record: LocalRecord?

  /// Creates a receipt.
  /// - Parameters:
  ///   - key: the record.
  ///   - operationID: the operation id.
  ///   - enqueue: the enqueue result.
  ///   - record: the record after.
  public init(key: RecordKey, operationID: UUID?, enqueue: EnqueueResult, record: LocalRecord?) {
    self.key = key
    self.operationID = operationID
    self.enqueue = enqueue
    self.record = record
  }
}
