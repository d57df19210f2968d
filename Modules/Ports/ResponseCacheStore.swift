import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One stored reply of the response cache: what answers a later GET of its URL, offline too.
package struct CachedResponse: Sendable, Equatable {
  /// The store's key for the entry.
  package var id: Int64
  /// The partition it belongs to (whose session it was fetched with, decision 2513).
  package var partition: String
  /// The request URL, absolute.
  package var url: String
  /// The request's values of the fields the reply's `Vary` names, lowercased name → value.
  package var varyValues: [String: String]
  /// The reply's status.
  package var status: Int
  /// The reply's header fields, updated by each 304.
  package var fields: HTTPFields
  /// The body's length in bytes.
  package var size: Int
  /// When the reply was received or last revalidated (the freshness rules' response time).
  package var storedAt: Date
  /// When it last answered a request (the eviction order).
  package var lastUsed: Date
  /// Whether the user pinned it: never evicted.
  package var pinned: Bool

  /// Makes an entry.
  package init(
    id: Int64, partition: String, url: String, varyValues: [String: String], status: Int,
    fields: HTTPFields, size: Int, storedAt: Date, lastUsed: Date, pinned: Bool
  ) {
    self.id = id
    self.partition = partition
    self.url = url
    self.varyValues = varyValues
    self.status = status
    self.fields = fields
    self.size = size
    self.storedAt = storedAt
    self.lastUsed = lastUsed
    self.pinned = pinned
  }

  /// The strong or weak `ETag`, a validator for `If-None-Match`.
  package var etag: String? { fields[.eTag] }
  /// `Last-Modified`, the validator for `If-Modified-Since` when there is no `ETag`.
  package var lastModified: String? { fields[.lastModified] }
}

/// The durable store behind the caching middleware: entries by partition and URL, each with a
/// body file, under a byte budget (decision 2510). Every call is synchronous and short (one
/// SQLite transaction, one file).
package protocol ResponseCacheStore: Sendable {
  /// The entries stored for a URL in a partition (one per set of `Vary` values).
  func entries(partition: String, url: String) throws -> [CachedResponse]
  /// An entry's body; throws when its file is gone (the entry is then dropped).
  func body(of entry: CachedResponse) throws -> Data
  /// Stores a reply, replacing the entry of the same partition, URL and `Vary` values, and
  /// evicting least-recently-used entries to stay within the budget.
  @discardableResult
  func store(
    partition: String, url: String, varyValues: [String: String], status: Int,
    fields: HTTPFields, body: Data, now: Date
  ) throws -> CachedResponse
  /// Replaces an entry's header fields and response time after a 304, and marks it used.
  func refresh(_ entry: CachedResponse, fields: HTTPFields, now: Date) throws
  /// Marks an entry used now.
  func touch(_ entry: CachedResponse, now: Date) throws
  /// Removes every entry of a URL in a partition (after a write to it succeeded).
  func invalidate(partition: String, url: String) throws
}
