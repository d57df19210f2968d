#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record of a collection declared at run time (a `CollectionDescription` from the config
/// file): its id, its fields as JSON, and the server's version and update time. The typed view
/// `SyncEngine<JSONRecord>` and `Records` hand out.
public struct JSONRecord: CollectionRecord, Equatable {
  /// The record's id.
  public var id: String
  /// The fields besides id, version and update time, as the local copy shows them.
  public var fields: [String: JSONValue]
  /// The server's version this copy is based on; nil when the server has not confirmed it.
  package var version: Int?
  /// When the server last changed it.
  package var updatedAt: Date?

  /// Creates a record.
  /// - Parameters:
  ///   - id: the id.
  ///   - fields: the fields.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  public init(
    id: String, fields: [String: JSONValue], version: Int? = nil, updatedAt: Date? = nil
  ) {
    self.id = id
    self.fields = fields
    self.version = version
    self.updatedAt = updatedAt
  }

  /// Reads the record a local record shows (its local fields, the server's version).
  /// - Parameter record: a local record, not deleted.
  /// - Throws: `CourierError` of kind `decoding` when it is deleted or its payload is not a
  ///   JSON object.
  public init(record: LocalRecord) throws {
    guard case .object(let fields) = try record.livePayload() else {
      throw CourierError(.decoding, code: "record_not_object", context: "\(record.key)")
    }
    self.init(
      id: record.key.id, fields: fields, version: record.version, updatedAt: record.updatedAt)
  }

  /// The fields, as a record payload.
  public var payload: JSONValue { .object(fields) }
}
