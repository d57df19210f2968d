#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
  package init(collection: String, id: String) {
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
