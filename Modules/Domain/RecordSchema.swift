import Foundation

/// How a collection's JSON objects carry a record's id, version and update time, so a user's
/// own record type can be stored and synced like articles. The other members form the payload.
public struct RecordSchema: Sendable, Equatable {
  /// The member holding the id (a string).
  public var idKey: String
  /// The member holding the server's version (an integer).
  public var versionKey: String
  /// The member holding the update time (RFC 3339), optional in a record.
  public var updatedAtKey: String

  /// The backend contract's names: `id`, `version`, `updated_at`.
  public static let standard = RecordSchema(
    idKey: "id", versionKey: "version", updatedAtKey: "updated_at")

  /// Creates a schema.
  /// - Parameters:
  ///   - idKey: the id's member.
  ///   - versionKey: the version's member.
  ///   - updatedAtKey: the update time's member.
  public init(idKey: String, versionKey: String, updatedAtKey: String) {
    self.idKey = idKey
    self.versionKey = versionKey
    self.updatedAtKey = updatedAtKey
  }

  /// Reads a server's JSON object as a record.
  /// - Parameter json: the object, as the server sent it.
  /// - Returns: the record; the payload holds every member except the three above.
  /// - Throws: `CourierError` of kind `decoding`, naming the missing or mistyped member.
  public func serverRecord(from json: JSONValue) throws -> ServerRecord {
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
  public func json(for record: ServerRecord) -> JSONValue {
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

/// RFC 3339 timestamps as the backend writes them (`2026-11-30T10:15:00.123Z`).
public enum RFC3339 {
  /// Parses a timestamp, with or without fractional seconds.
  /// - Parameter text: the timestamp.
  /// - Returns: the date, or nil when it is not RFC 3339.
  public static func date(from text: String) -> Date? {
    if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
      return date
    }
    return try? Date.ISO8601FormatStyle().parse(text)
  }

  /// Formats a date in UTC with milliseconds.
  /// - Parameter date: the date.
  /// - Returns: the timestamp.
  public static func string(from date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}

/// An article, the backend contract's record type: a typed view over a `LocalRecord` or a
/// `ServerRecord` of the `articles` collection.
public struct Article: Sendable, Equatable, Codable {
  /// The collection articles live in.
  public static let collection = "articles"

  /// The id (a UUID the client generates when creating).
  public var id: String
  /// The title.
  public var title: String
  /// The body.
  public var body: String
  /// The server's version this copy is based on; nil when the server has not confirmed it.
  public var version: Int?
  /// When the server last changed it.
  public var updatedAt: Date?

  /// Creates an article.
  /// - Parameters:
  ///   - id: the id.
  ///   - title: the title.
  ///   - body: the body.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  public init(id: String, title: String, body: String, version: Int? = nil, updatedAt: Date? = nil)
  {
    self.id = id
    self.title = title
    self.body = body
    self.version = version
    self.updatedAt = updatedAt
  }

  /// Reads the article a local record shows (its local payload, the server's version).
  /// - Parameter record: a record of the `articles` collection, not deleted.
  /// - Throws: `CourierError` of kind `decoding` naming the missing member.
  public init(record: LocalRecord) throws {
    guard let payload = record.payload else {
      throw CourierError(.decoding, code: "record_deleted", field: nil, context: "\(record.key)")
    }
    try self.init(id: record.key.id, payload: payload, version: record.version)
    updatedAt = record.updatedAt
  }

  /// Reads a server record as an article.
  /// - Parameter record: the record.
  /// - Throws: `CourierError` of kind `decoding` naming the missing member.
  public init(server record: ServerRecord) throws {
    try self.init(id: record.id, payload: record.payload, version: record.version)
    updatedAt = record.updatedAt
  }

  private init(id: String, payload: JSONValue, version: Int?) throws {
    guard let title = payload["title"]?.stringValue else {
      throw CourierError(.decoding, code: "record_missing_field", field: "title")
    }
    guard let body = payload["body"]?.stringValue else {
      throw CourierError(.decoding, code: "record_missing_field", field: "body")
    }
    self.init(id: id, title: title, body: body, version: version)
  }

  /// The record's key.
  public var key: RecordKey { RecordKey(collection: Self.collection, id: id) }

  /// The fields the client owns, as a record payload (`{"title","body"}`).
  public var payload: JSONValue { .object(["title": .string(title), "body": .string(body)]) }
}
