import Foundation

/// Names one record: the collection it belongs to (`articles`) and its id in that collection.
public struct RecordKey: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
  /// The collection, as the server's path names it (`articles`).
  public var collection: String
  /// The record's id, unique in its collection.
  public var id: String

  /// Creates a key.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - id: the id.
  public init(collection: String, id: String) {
    self.collection = collection
    self.id = id
  }

  /// Orders keys by collection, then id.
  /// - Parameters:
  ///   - lhs: a key.
  ///   - rhs: another key.
  /// - Returns: whether `lhs` sorts first.
  public static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
    (lhs.collection, lhs.id) < (rhs.collection, rhs.id)
  }

  /// `collection/id`.
  public var description: String { "\(collection)/\(id)" }
}

/// A record as the server last sent it. The server owns `version` and `updatedAt`.
public struct ServerRecord: Sendable, Equatable, Codable {
  /// The record's id.
  public var id: String
  /// The record's fields other than the id, the version and the update time.
  public var payload: JSONValue
  /// The server's version of the record.
  public var version: Int
  /// When the server last changed it, if it said.
  public var updatedAt: Date?

  /// Creates a server record.
  /// - Parameters:
  ///   - id: the id.
  ///   - payload: the other fields.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  public init(id: String, payload: JSONValue, version: Int, updatedAt: Date? = nil) {
    self.id = id
    self.payload = payload
    self.version = version
    self.updatedAt = updatedAt
  }
}

/// Where a local record stands relative to the server.
public enum LocalState: String, Sendable, Codable, CaseIterable {
  /// Same as the server's copy; no local change waits.
  case synced
  /// Created here; the server has not confirmed it yet.
  case created
  /// Changed here; the change has not been confirmed yet.
  case modified
  /// Deleted here; the deletion has not been confirmed yet (a tombstone).
  case deleted

  /// The state a record with local changes is in, from what it holds.
  /// - Parameters:
  ///   - payload: the local payload, nil when deleted locally.
  ///   - server: the server's copy, if known.
  /// - Returns: `deleted`, `created` or `modified`.
  public static func pending(payload: JSONValue?, server: ServerRecord?) -> LocalState {
    if payload == nil { return .deleted }
    return server == nil ? .created : .modified
  }
}

/// The local copy of one record: what the user sees (with optimistic local edits applied) and,
/// kept alongside, the server's last known copy so a refused edit can be rolled back.
public struct LocalRecord: Sendable, Equatable, Codable {
  /// Which record.
  public var key: RecordKey
  /// What the user sees; nil when the record was deleted here and the deletion is not confirmed.
  public var payload: JSONValue?
  /// Where the record stands relative to the server.
  public var state: LocalState
  /// The server's last known copy; nil when the server has never confirmed this record.
  public var server: ServerRecord?

  /// Creates a local record.
  /// - Parameters:
  ///   - key: which record.
  ///   - payload: what the user sees, nil for a local deletion.
  ///   - state: where it stands.
  ///   - server: the server's last known copy.
  public init(key: RecordKey, payload: JSONValue?, state: LocalState, server: ServerRecord?) {
    self.key = key
    self.payload = payload
    self.state = state
    self.server = server
  }

  /// A record equal to the server's copy.
  /// - Parameters:
  ///   - server: the server's copy.
  ///   - collection: its collection.
  /// - Returns: the synced record.
  public static func synced(_ server: ServerRecord, collection: String) -> LocalRecord {
    LocalRecord(
      key: RecordKey(collection: collection, id: server.id), payload: server.payload,
      state: .synced, server: server)
  }

  /// The server version the local copy is based on (the base version of the next edit).
  public var version: Int? { server?.version }
  /// When the server last changed the record, as far as we know.
  public var updatedAt: Date? { server?.updatedAt }
  /// Whether a local change has not been confirmed by the server yet.
  public var hasLocalChanges: Bool { state != .synced }
  /// Whether the record is deleted here (a tombstone kept until the deletion is confirmed).
  public var isDeleted: Bool { payload == nil }
}

/// What the store knows about a whole collection: the list's `ETag` and when it was last
/// refreshed from the server.
public struct CollectionState: Sendable, Equatable, Codable {
  /// The collection this state belongs to (`articles`).
  public var collection: String
  /// The `ETag` of the last full list received, sent back as `If-None-Match`.
  public var etag: String?
  /// When the list was last confirmed fresh (a 200 or a 304).
  public var lastRefresh: Date?

  /// Creates a collection state.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - lastRefresh: the last refresh time.
  public init(collection: String, etag: String? = nil, lastRefresh: Date? = nil) {
    self.collection = collection
    self.etag = etag
    self.lastRefresh = lastRefresh
  }
}

/// An optimistic local write: what the user did to one record.
public enum RecordChange: Sendable, Equatable, Codable {
  /// Create or replace the record's fields.
  case put(RecordKey, payload: JSONValue)
  /// Delete the record.
  case delete(RecordKey)

  /// The record changed.
  public var key: RecordKey {
    switch self {
    case .put(let key, _), .delete(let key): return key
    }
  }
}
