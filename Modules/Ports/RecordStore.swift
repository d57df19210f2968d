import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The local copy of the server's data, per collection: records (with optimistic local edits
/// and the server's copy kept alongside), each collection's `ETag` and last refresh time.
/// Calls are synchronous and durable: when one returns, its change is on disk.
public protocol RecordStore: Sendable {
  /// Looks a record up by collection and id.
  /// - Parameter key: which.
  /// - Returns: it, or nil.
  /// - Throws: `StoreError` when the store cannot be read.
  func record(_ key: RecordKey) throws -> LocalRecord?

  /// A collection's records, local tombstones included, sorted by id.
  /// - Parameter collection: the collection.
  /// - Returns: the records.
  /// - Throws: `StoreError` when the store cannot be read.
  func records(in collection: String) throws -> [LocalRecord]

  /// A collection's `ETag` and last refresh time.
  /// - Parameter collection: the collection.
  /// - Returns: its state, empty when never refreshed.
  /// - Throws: `StoreError` when the store cannot be read.
  func collectionState(_ collection: String) throws -> CollectionState

  /// Applies a full list from the server (a 200 to `GET /<collection>`), with its `ETag`:
  /// records without local changes follow the server, records with local changes keep them
  /// and update the server's copy kept alongside. One transaction.
  /// - Parameters:
  ///   - records: the server's records.
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - refreshedAt: when it was received.
  /// - Throws: `StoreError` when it cannot be written; nothing changed then.
  func applyServerList(
    _ records: [ServerRecord], collection: String, etag: String?, refreshedAt: Date) throws

  /// Records that the list did not change (a 304): the refresh time moves, the `ETag` stays.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - refreshedAt: when the 304 was received.
  /// - Throws: `StoreError` when it cannot be written.
  func markNotModified(collection: String, refreshedAt: Date) throws

  /// Applies news about one record: its current copy, or nil when the server answered 404.
  /// - Parameters:
  ///   - record: the server's record, or nil.
  ///   - key: which record.
  /// - Returns: the record after.
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  func applyServerRecord(_ record: ServerRecord?, key: RecordKey) throws -> LocalRecord?
}
