#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the store knows about a whole collection: the list's `ETag` and when it was last
/// refreshed from the server.
public struct CollectionState: Sendable, Equatable, Codable {
  /// The collection this state belongs to (`articles`).
  package var collection: String
  /// The `ETag` of the last full list received, sent back as `If-None-Match`.
  package var etag: String?
  /// When the list was last confirmed fresh (a 200 or a 304).
  package var lastRefresh: Date?

  /// Creates a collection state.
  /// - Parameters:
  ///   - collection: the collection.
  ///   - etag: the list's `ETag`.
  ///   - lastRefresh: the last refresh time.
  package init(collection: String, etag: String? = nil, lastRefresh: Date? = nil) {
    self.collection = collection
    self.etag = etag
    self.lastRefresh = lastRefresh
  }
}
