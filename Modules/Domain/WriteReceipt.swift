#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a local write did: the optimistic record and what waits in the outbox.
public struct WriteReceipt: Sendable, Equatable {
  /// The record written.
  package var key: RecordKey
  /// The operation id (its `Idempotency-Key`), or nil when the write cancelled an unsent one.
  public var operationID: UUID?
  /// What happened to the queue.
  package var enqueue: EnqueueResult
  /// The record as shown after the write (nil when gone).
  package var record: LocalRecord?

  /// Creates a receipt.
  /// - Parameters:
  ///   - key: the record.
  ///   - operationID: the operation id.
  ///   - enqueue: the enqueue result.
  ///   - record: the record after.
  package init(key: RecordKey, operationID: UUID?, enqueue: EnqueueResult, record: LocalRecord?) {
    self.key = key
    self.operationID = operationID
    self.enqueue = enqueue
    self.record = record
  }
}
