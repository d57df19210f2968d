import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A create, built and committed: the engine's own `create(_:)` and a write made before any
/// engine exists (an offline add, decision 1410) go through these, so there is one write path.
extension SyncEngine {
  /// The change and the outbox operation that create `record`, checked against the
  /// declaration: what ``create(_:)`` writes, for a write made before any engine exists.
  /// - Parameters:
  ///   - record: the record.
  ///   - collection: its collection's declaration.
  ///   - time: the operation's enqueue time.
  /// - Returns: the change and the operation.
  /// - Throws: `CourierError.invalidInput` when its fields do not fit the declaration.
  package static func creation(
    of record: Record, in collection: CollectionDescription, at time: Date
  ) throws -> (RecordChange, OutboxOperation) {
    let payload = record.payload  // built from the fields at each use: once here
    try collection.validate(payload)
    let key = RecordKey(collection: collection.name, id: record.id)
    let operation = OutboxOperation(
      key: key, kind: .create, payload: payload, baseVersion: nil, enqueuedAt: time)
    return (.put(key, payload: payload), operation)
  }

  /// Applies a change and enqueues its operation in one transaction, then reads the record
  /// back: every write's commit, the engine's and one made before the engine exists.
  /// - Parameters:
  ///   - change: the change.
  ///   - operation: its outbox operation.
  ///   - store: the local store.
  /// - Returns: the receipt.
  /// - Throws: `StoreError` when the store cannot write it (nothing changed then).
  package static func commit(
    _ change: RecordChange, _ operation: OutboxOperation, to store: any LocalStore
  ) throws -> WriteReceipt {
    let result = try store.applyAndEnqueue(change, operation)
    return WriteReceipt(
      key: change.key, operationID: result.entry?.id, enqueue: result,
      record: try store.record(change.key))
  }
}
