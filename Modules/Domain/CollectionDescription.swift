import Foundation

/// What the replay needs to know about a collection to address its records on the server: its
/// name in the local store, its path, and how its records carry id, version and update time.
public struct CollectionDescription: Sendable, Equatable {
  /// The collection's name in the local store (`articles`).
  public var name: String
  /// The collection's path on the server (`/articles`); a record is at `<path>/<id>`.
  public var path: String
  /// How the collection's JSON objects carry id, version and update time.
  public var schema: RecordSchema

  /// Creates a description.
  /// - Parameters:
  ///   - name: the collection's name.
  ///   - path: its path on the server; `/<name>` by default.
  ///   - schema: its record schema.
  public init(name: String, path: String? = nil, schema: RecordSchema = .standard) {
    self.name = name
    self.path = path ?? "/\(name)"
    self.schema = schema
  }
}
