import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The writes waiting to be sent, in order (FIFO), durable across restarts. An entry stays
/// until the server applied it (`remove`) or the user resolves it; a refused or conflicted
/// entry is kept, in that state, so the user can see why.
public protocol Outbox: Sendable {
  /// Adds an operation at the end of the queue, or folds it into the record's last unsent
  /// entry (see `OutboxCoalescing`). Durable when it returns.
  /// - Parameter operation: the operation.
  /// - Returns: what happened to the queue.
  /// - Throws: `StoreError.duplicate` when the operation id is already queued; `StoreError`
  ///   when it cannot be written. Nothing changed then.
  @discardableResult
  func enqueue(_ operation: OutboxOperation) throws -> EnqueueResult

  /// The pending entries, in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  func pending() throws -> [OutboxEntry]

  /// Every entry (pending, rejected, conflicted), in queue order.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  func entries() throws -> [OutboxEntry]

  /// One collection's entries (pending, rejected, conflicted), in queue order: what a view of
  /// one kind of write (the queued uploads) reads without decoding every other entry.
  /// - Parameter collection: the collection.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  func entries(in collection: String) throws -> [OutboxEntry]

  /// Looks an outbox entry up by its operation id.
  /// - Parameter id: its operation id.
  /// - Returns: the entry, or nil.
  /// - Throws: `StoreError` when the store cannot be read.
  func entry(_ id: UUID) throws -> OutboxEntry?

  /// How many entries there are, by state.
  /// - Returns: the counts.
  /// - Throws: `StoreError` when the store cannot be read.
  func counts() throws -> OutboxCounts

  /// Counts a send attempt. Call it before the request leaves: from then on the entry is
  /// never coalesced.
  /// - Parameter id: the operation id.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id (it was coalesced away).
  @discardableResult
  func recordAttempt(_ id: UUID) throws -> OutboxEntry

  /// Removes an entry (sent, or given up).
  /// - Parameter id: the operation id.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  func remove(_ id: UUID) throws

  /// Marks an entry refused by the server for a business reason.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - message: the server's message for a person.
  ///   - code: the server's code.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  func markRejected(_ id: UUID, message: String, code: String?) throws -> OutboxEntry

  /// Marks an entry in conflict with the server's record.
  /// - Parameters:
  ///   - id: the operation id.
  ///   - serverRecord: the server's current record, as it sent it.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  func markConflicted(_ id: UUID, serverRecord: JSONValue) throws -> OutboxEntry

  /// Puts a rejected or conflicted entry back in the queue, at its place, optionally with a
  /// new base version (after the user resolved a conflict).
  /// - Parameters:
  ///   - id: the operation id.
  ///   - baseVersion: the new base version, or nil to keep it.
  /// - Returns: the updated entry.
  /// - Throws: `StoreError.notFound` when no entry has this id.
  @discardableResult
  func markPending(_ id: UUID, baseVersion: Int?) throws -> OutboxEntry
}

extension Outbox {
  /// One collection's entries, filtered from `entries()` (an adapter with an index on the
  /// collection reads only those).
  /// - Parameter collection: the collection.
  /// - Returns: the entries, in queue order.
  /// - Throws: `StoreError` when the store cannot be read.
  public func entries(in collection: String) throws -> [OutboxEntry] {
    try entries().filter { $0.key.collection == collection }
  }
}
