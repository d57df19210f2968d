#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An article, the backend contract's record type: a typed view over a `LocalRecord` or a
/// `ServerRecord` of the `articles` collection.
public struct Article: Sendable, Equatable, Codable {
  /// The collection articles live in.
  package static let collection = "articles"

  /// The id (a UUID the client generates when creating).
  public var id: String
  /// The headline shown in lists (the backend requires it non-empty).
  public var title: String
  /// The article's text, which may be empty.
  public var body: String
  /// Its photo: the server's id of a stored photo, or, until the photo written with it is
  /// stored, a local reference to Courier's private copy (`courier-local:<id>`); nil for none.
  public var photo: String?
  /// The server's version this copy is based on; nil when the server has not confirmed it.
  package var version: Int?
  /// When the server last changed it.
  package var updatedAt: Date?

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
    try self.init(id: record.key.id, payload: record.livePayload(), version: record.version)
    updatedAt = record.updatedAt
  }

  /// Reads a server record as an article.
  /// - Parameter record: the record.
  /// - Throws: `CourierError` of kind `decoding` naming the missing member.
  package init(server record: ServerRecord) throws {
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
    photo = payload["photo"]?.stringValue
  }

  /// Its attachment fields (`CollectionDescription.articles`).
  package static let attachmentFields = ["photo"]

  /// The record's key.
  package var key: RecordKey { RecordKey(collection: Self.collection, id: id) }

  /// The fields the client owns, as a record payload (`{"title","body"}`, and `"photo"` when
  /// it has one).
  public var payload: JSONValue {
    var members: [String: JSONValue] = ["title": .string(title), "body": .string(body)]
    if let photo { members["photo"] = .string(photo) }
    return .object(members)
  }
}
