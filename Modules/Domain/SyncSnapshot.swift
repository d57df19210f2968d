#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A list of records as shown at one moment: from the cache (possibly stale) or just
/// refreshed from the network, or the cache kept because the refresh failed.
public struct SyncSnapshot<Record: CollectionRecord>: Sendable {
  /// Where the list comes from.
  public enum Source: String, Sendable, Equatable {
    /// The local store, before asking the server.
    case cache
    /// The local store after a refresh (a 200 or a 304), or after a failed one (`error`).
    case network
  }

  /// Where the list comes from.
  public var source: Source
  /// The records shown, sorted by id; local deletions are left out.
  public var items: [SyncItem<Record>]
  /// Records deleted locally whose deletion is not confirmed yet.
  package var deletedIDs: [String]
  /// Records the store holds but that could not be read as `Record` (named in the error).
  package var unreadable: [String]
  /// When the list was last confirmed fresh by the server; nil when never.
  package var lastRefresh: Date?
  /// The list's age at the time of the snapshot (now − lastRefresh), nil when never refreshed.
  package var age: TimeInterval?
  /// For a network snapshot: whether the server answered 304 (nothing changed).
  package var notModified: Bool
  /// For a network snapshot: why the refresh failed (the cache is kept, untouched).
  public var error: CourierError?

  /// Creates a snapshot.
  /// - Parameters:
  ///   - source: cache or network.
  ///   - items: the records.
  ///   - deletedIDs: local deletions.
  ///   - unreadable: unreadable record ids.
  ///   - lastRefresh: the last confirmation.
  ///   - age: the age.
  ///   - notModified: whether a 304 came.
  ///   - error: the refresh failure.
  package init(
    source: Source, items: [SyncItem<Record>], deletedIDs: [String] = [], unreadable: [String] = [],
    lastRefresh: Date?, age: TimeInterval?, notModified: Bool = false,
    error: CourierError? = nil
  ) {
    self.source = source
    self.items = items
    self.deletedIDs = deletedIDs
    self.unreadable = unreadable
    self.lastRefresh = lastRefresh
    self.age = age
    self.notModified = notModified
    self.error = error
  }

  /// Whether the list shown may be out of date (from the cache, or a failed refresh).
  package var isStale: Bool { source == .cache || error != nil }
}
