#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An operation in the outbox, with its place in the queue and its progress.
public struct OutboxEntry: Sendable, Equatable, Codable {
  /// The place in the queue: entries are sent in increasing order (FIFO).
  package var sequence: Int64
  /// The change waiting to be sent: what to do to which record.
  package var operation: OutboxOperation
  /// Pending, rejected or conflicted.
  package var state: OutboxEntryState
  /// How many times sending was started. Counted before each send, so an entry with zero
  /// attempts has certainly never reached the server and may still be coalesced.
  package var attempts: Int

  /// Creates an entry.
  /// - Parameters:
  ///   - sequence: the place in the queue.
  ///   - operation: the operation.
  ///   - state: where it stands.
  ///   - attempts: sends started so far.
  package init(
    sequence: Int64, operation: OutboxOperation, state: OutboxEntryState = .pending,
    attempts: Int = 0
  ) {
    self.sequence = sequence
    self.operation = operation
    self.state = state
    self.attempts = attempts
  }

  /// The operation id (the `Idempotency-Key`).
  public var id: UUID { operation.id }
  /// The record written.
  public var key: RecordKey { operation.key }
  /// Whether the entry is pending and was never handed to the network.
  package var isUnsent: Bool { state.isPending && attempts == 0 }
}
