import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads a local store's rows inside a transaction.
public protocol LocalStoreReader {
  /// Looks a record up by collection and id.
  /// - Parameter key: which.
  /// - Returns: it, or nil.
  /// - Throws: `StoreError` when it cannot be read.
  func record(_ key: RecordKey) throws -> LocalRecord?
  /// A collection's records, sorted by id.
  /// - Parameter collection: the collection.
  /// - Returns: the records.
  /// - Throws: `StoreError` when they cannot be read.
  func records(in collection: String) throws -> [LocalRecord]
  /// A collection's state.
  /// - Parameter collection: the collection.
  /// - Returns: its state.
  /// - Throws: `StoreError` when it cannot be read.
  func collectionState(_ collection: String) throws -> CollectionState
  /// Looks an outbox entry up by its operation id.
  /// - Parameter id: its operation id.
  /// - Returns: it, or nil.
  /// - Throws: `StoreError` when it cannot be read.
  func entry(_ id: UUID) throws -> OutboxEntry?
  /// A record's entries, in queue order.
  /// - Parameter key: the record.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when they cannot be read.
  func entries(for key: RecordKey) throws -> [OutboxEntry]
  /// Every entry, in queue order.
  /// - Parameter pendingOnly: whether to list pending entries only.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when they cannot be read.
  func entries(pendingOnly: Bool) throws -> [OutboxEntry]
  /// One collection's entries, in queue order.
  /// - Parameter collection: the collection.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when they cannot be read.
  func entries(in collection: String) throws -> [OutboxEntry]
  /// Counts the entries by state.
  /// - Returns: the counts.
  /// - Throws: `StoreError` when they cannot be read.
  func counts() throws -> OutboxCounts
  /// The sequence number the next appended entry gets.
  /// - Returns: it.
  /// - Throws: `StoreError` when it cannot be read.
  func nextSequence() throws -> Int64
  /// Where some entries stand, without decoding them (see `OutboxStamp`).
  /// - Parameter ids: operation ids.
  /// - Returns: the stamp of each id an entry has.
  /// - Throws: `StoreError` when they cannot be read.
  func stamps(of ids: [UUID]) throws -> [UUID: OutboxStamp]
  /// A record's entries but the one at `sequence`, in queue order.
  /// - Parameters:
  ///   - key: the record.
  ///   - sequence: the entry left out.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when they cannot be read.
  func entries(for key: RecordKey, except sequence: Int64) throws -> [OutboxEntry]
  /// Whether a record has an entry other than the one at `sequence`, whatever its state.
  /// - Parameters:
  ///   - key: the record.
  ///   - sequence: the entry left out.
  /// - Returns: whether one remains.
  /// - Throws: `StoreError` when they cannot be read.
  func hasEntries(for key: RecordKey, except sequence: Int64) throws -> Bool
}

extension LocalStoreReader {
  /// One collection's entries, filtered from every entry's decoded row.
  /// - Parameter collection: the collection.
  /// - Returns: the entries, in queue order.
  /// - Throws: `StoreError` when they cannot be read.
  package func entries(in collection: String) throws -> [OutboxEntry] {
    try entries(pendingOnly: false).filter { $0.key.collection == collection }
  }

  /// Where some entries stand, from their decoded rows.
  /// - Parameter ids: operation ids.
  /// - Returns: the stamp of each id an entry has.
  /// - Throws: `StoreError` when they cannot be read.
  package func stamps(of ids: [UUID]) throws -> [UUID: OutboxStamp] {
    var stamps: [UUID: OutboxStamp] = [:]
    for id in ids {
      if let entry = try entry(id) { stamps[id] = OutboxStamp(entry) }
    }
    return stamps
  }

  /// A record's entries but the one at `sequence`, from all of its entries.
  /// - Parameters:
  ///   - key: the record.
  ///   - sequence: the entry left out.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when they cannot be read.
  package func entries(for key: RecordKey, except sequence: Int64) throws -> [OutboxEntry] {
    try entries(for: key).filter { $0.sequence != sequence }
  }

  /// Whether a record has an entry other than the one at `sequence`, from all of its entries.
  /// - Parameters:
  ///   - key: the record.
  ///   - sequence: the entry left out.
  /// - Returns: whether one remains.
  /// - Throws: `StoreError` when they cannot be read.
  package func hasEntries(for key: RecordKey, except sequence: Int64) throws -> Bool {
    try entries(for: key).contains { $0.sequence != sequence }
  }
}
