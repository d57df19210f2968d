#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension Article {
  /// The payload members a listing of articles reads (`RecordFields.values` in this order):
  /// the two an article needs to be readable at all, then its photo (nil when it has none).
  package static let listedFields = ["title", "body", "photo"]

  /// The cached articles as `SyncEngine.cached()` shows them, from a projection read: readable
  /// articles in the store's order (by id), pending deletions by id, and records lacking a
  /// string title or body as unreadable. Pure: the time is an input.
  /// - Parameters:
  ///   - fields: the records' `listedFields`, by id.
  ///   - lastRefresh: when the collection was last refreshed.
  ///   - now: the time the age is measured at.
  /// - Returns: a `cache` snapshot.
  package static func cachedSnapshot(
    _ fields: [RecordFields], lastRefresh: Date?, now: Date
  ) -> SyncSnapshot<Article> {
    var items: [SyncItem<Article>] = []
    items.reserveCapacity(fields.count)
    var deleted: [String] = []
    var unreadable: [String] = []
    for record in fields {
      if record.isDeleted {
        deleted.append(record.id)
        continue
      }
      guard record.values.count >= 2, let title = record.values[0], let body = record.values[1]
      else {
        unreadable.append(record.id)
        continue
      }
      var article = Article(
        id: record.id, title: title, body: body, version: record.version,
        updatedAt: record.updatedAt)
      article.photo = record.values.count > 2 ? record.values[2] : nil
      items.append(SyncItem(value: article, state: record.state))
    }
    return SyncSnapshot(
      source: .cache, items: items, deletedIDs: deleted, unreadable: unreadable,
      lastRefresh: lastRefresh, age: lastRefresh.map { max(0, now.timeIntervalSince($0)) })
  }
}
