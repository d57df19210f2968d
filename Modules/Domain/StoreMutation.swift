#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One primitive change to a local store: the unit every adapter persists. The store's
/// operations (apply and enqueue, complete, refresh...) are planned as a list of these by
/// `LocalStorePlan` and committed together, all or nothing.
package enum StoreMutation: Sendable, Equatable, Codable {
  /// Create or replace a record.
  case putRecord(LocalRecord)
  /// Remove a record (nothing if absent).
  case deleteRecord(RecordKey)
  /// Create or replace a collection's ETag and refresh time.
  case putCollection(CollectionState)
  /// Add an entry; fails if its sequence number or operation id is already present.
  case insertEntry(OutboxEntry)
  /// Replace the entry with the same sequence number; fails if absent, or if the new operation
  /// id belongs to another entry.
  case replaceEntry(OutboxEntry)
  /// Remove the entry with this sequence number; fails if absent.
  case deleteEntry(sequence: Int64)
  /// Set the attempt count of the entry with this sequence number and operation id, leaving
  /// the rest of it as stored (a replay window counts its attempts without rewriting the
  /// entries); fails if no entry has both.
  case setAttempts(sequence: Int64, operationID: UUID, attempts: Int)
  /// Move a record's pending entries that a completion left on the old base version onto the
  /// server's new one (`OutboxRebase`): one mutation for all of them; none to move is fine.
  case rebaseEntries(OutboxRebase)
}
