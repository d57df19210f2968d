#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The local copy of one record: what the user sees (with optimistic local edits applied) and,
/// kept alongside, the server's last known copy so a refused edit can be rolled back.
public struct LocalRecord: Sendable, Equatable, Codable {
  /// Which record.
  public var key: RecordKey
  /// What the user sees; nil when the record was deleted here and the deletion is not confirmed.
  public var payload: JSONValue?
  /// Where the record stands relative to the server.
  package var state: LocalState
  /// The server's last known copy; nil when the server has never confirmed this record.
  package var server: ServerRecord?

  /// Creates a local record.
  /// - Parameters:
  ///   - key: which record.
  ///   - payload: what the user sees, nil for a local deletion.
  ///   - state: where it stands.
  ///   - server: the server's last known copy.
  package init(key: RecordKey, payload: JSONValue?, state: LocalState, server: ServerRecord?) {
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
  package static func synced(_ server: ServerRecord, collection: String) -> LocalRecord {
    LocalRecord(
      key: RecordKey(collection: collection, id: server.id), payload: server.payload,
      state: .synced, server: server)
  }

  /// The server version the local copy is based on (the base version of the next edit).
  package var version: Int? { server?.version }
  /// When the server last changed the record, as far as we know.
  package var updatedAt: Date? { server?.updatedAt }
  /// Whether a local change has not been confirmed by the server yet.
  package var hasLocalChanges: Bool { state != .synced }
  /// Whether the record is deleted here (a tombstone kept until the deletion is confirmed).
  package var isDeleted: Bool { payload == nil }
}
