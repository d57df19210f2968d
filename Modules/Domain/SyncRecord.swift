#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record type the sync engine can keep in sync, whose collection is known at compile time:
/// its collection, how its JSON carries id, version and update time, and a typed view over a
/// local record. `Article` is one.
package protocol SyncRecord: CollectionRecord {
  /// The collection (the server path `/<collection>`).
  static var collection: String { get }
  /// How the server's JSON carries id, version and update time.
  static var schema: RecordSchema { get }
  /// The collection's whole declaration (fields, answer rules); by default the collection's
  /// name at `/<collection>` with `schema`, the contract's answers and open fields.
  static var declaration: CollectionDescription { get }
  /// The record's id.
  var id: String { get }
  /// The fields the client owns, sent in a create or update.
  var payload: JSONValue { get }
  /// Reads the typed record a local record shows.
  /// - Parameter record: a local record of the collection, not deleted.
  /// - Throws: `CourierError` of kind `decoding` naming the bad member.
  init(record: LocalRecord) throws
}

extension SyncRecord {
  /// The collection's name at `/<collection>` with `schema`, the contract's answers and open
  /// fields.
  package static var declaration: CollectionDescription {
    CollectionDescription(name: collection, schema: schema)
  }
}

extension Article: SyncRecord {
  /// The contract's names.
  package static var schema: RecordSchema { .standard }
  /// `CollectionDescription.articles`: a required `title` and a `body`, both strings.
  package static var declaration: CollectionDescription { .articles }
}
