#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A typed view over the local records of one collection: what the sync engine hands out and
/// takes in. A record type of a collection known at compile time is a `SyncRecord` (it names
/// its collection); `JSONRecord` views the records of any declared collection, its fields kept
/// as JSON.
public protocol CollectionRecord: Sendable {
  /// The record's id.
  var id: String { get }
  /// The fields the client owns, sent in a create or update.
  var payload: JSONValue { get }
  /// Reads the typed record a local record shows.
  /// - Parameter record: a local record of the collection, not deleted.
  /// - Throws: `CourierError` of kind `decoding` naming the bad member.
  init(record: LocalRecord) throws
}
