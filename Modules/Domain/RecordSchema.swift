import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a collection's JSON objects carry a record's id, version and update time, so a user's
/// own record type can be stored and synced like articles. The other members form the payload.
package struct RecordSchema: Sendable, Equatable {
  /// The member holding the id (a string).
  package var idKey: String
  /// The member holding the server's version (an integer).
  package var versionKey: String
  /// The member holding the update time (RFC 3339), optional in a record.
  package var updatedAtKey: String

  /// The backend contract's names: `id`, `version`, `updated_at`.
  package static let standard = RecordSchema(
    idKey: "id", versionKey: "version", updatedAtKey: "updated_at")

  /// Creates a schema.
  /// - Parameters:
  ///   - idKey: the id's member.
  ///   - versionKey: the version's member.
  ///   - updatedAtKey: the update time's member.
  package init(idKey: String, versionKey: String, updatedAtKey: String) {
    self.idKey = idKey
    self.versionKey = versionKey
    self.updatedAtKey = updatedAtKey
  }

  /// Reads a server's JSON object as a record.
  /// - Parameter json: the object, as the server sent it.
  /// - Returns: the record; the payload holds every member except the three above.
  /// - Throws: `CourierError` of kind `decoding`, naming the missing or mistyped member.
  package func serverRecord(from json: JSONValue) throws -> ServerRecord {
    guard case .object(var members) = json else {
      throw CourierError(
        .decoding, code: "record_not_object", field: nil, underlying: "not an object")
    }
    guard let id = members[idKey]?.stringValue, !id.isEmpty else {
      throw CourierError(.decoding, code: "record_missing_field", field: idKey)
    }
    guard let version = members[versionKey]?.intValue else {
      throw CourierError(.decoding, code: "record_missing_field", field: versionKey)
    }
    var updatedAt: Date?
    if let raw = members[updatedAtKey], raw != .null {
      guard let text = raw.stringValue, let date = RFC3339.date(from: text) else {
        throw CourierError(.decoding, code: "record_bad_timestamp", field: updatedAtKey)
      }
      updatedAt = date
    }
    members[idKey] = nil
    members[versionKey] = nil
    members[updatedAtKey] = nil
    return ServerRecord(id: id, payload: .object(members), version: version, updatedAt: updatedAt)
  }

  /// Writes a record back as the server's JSON object.
  /// - Parameter record: the record.
  /// - Returns: the object with the payload's members plus id, version and update time.
  package func json(for record: ServerRecord) -> JSONValue {
    var members: [String: JSONValue] = [:]
    if case .object(let payload) = record.payload { members = payload }
    members[idKey] = .string(record.id)
    members[versionKey] = .integer(Int64(record.version))
    if let updatedAt = record.updatedAt {
      members[updatedAtKey] = .string(RFC3339.string(from: updatedAt))
    }
    return .object(members)
  }
}
