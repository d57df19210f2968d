import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Settling entries by hand: the user's answer to a kept conflict, a refused entry sent again,
/// an entry dropped. Each is one store call, then the state is reloaded.
extension OutboxReplayer {
  /// Settles a conflict kept for the user (manual policy).
  ///
  /// Against a record deleted on the server (the conflict shows no server record, decision
  /// 2401): keeping the local write sends it again as a create, or on the version the server
  /// re-created from it; taking the server's side drops the record, or deletes that
  /// re-creation again.
  /// - Parameters:
  ///   - operationID: the conflicted entry's operation id.
  ///   - keepLocal: true to send the local write again on top of the server's version; false
  ///     to take the server's record and drop the local changes to that record.
  /// - Throws: `StoreError.notFound` when no such entry is conflicted.
  package func resolveConflict(operationID: UUID, keepLocal: Bool) throws {
    guard let entry = try store.entry(operationID),
      case .conflicted(let json) = entry.state
    else {
      throw StoreError(.notFound, "No conflicted outbox entry has operation id \(operationID).")
    }
    if json == .null {
      try resolveGone(entry, keepLocal: keepLocal)
      reloadState()
      if keepLocal { requestReplay() }
      return
    }
    let server = try? schema(of: entry).serverRecord(from: json)
    if keepLocal {
      try store.markPending(operationID, baseVersion: server?.version)
    } else {
      try store.revert(entry.key)
      if let server { try store.applyServerRecord(server, key: entry.key) }
    }
    reloadState()
    if keepLocal { requestReplay() }
  }

  /// Puts a refused, conflicted or parked entry back in the queue, to be sent by the next pass.
  ///
  /// A refused or conflicted entry gets a new operation id, hence a new `Idempotency-Key`
  /// (decision 0412): the server stored its refusal (or its 409) under the old key and would
  /// answer the same again. A conflicted entry is also rebased on the server's version it was
  /// shown, as ``resolveConflict(operationID:keepLocal:)`` does with `keepLocal`. A parked entry
  /// keeps its operation id: the server may have applied it, and the same key makes it answer
  /// so instead of applying it twice (decision 2401). The entry keeps its place in the queue
  /// (sequence number) and its attempt count. A pending entry is left as it is.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry now pending (with its new operation id, unless it was parked).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  package func retryEntry(operationID: UUID) throws -> OutboxEntry {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let retried = try requeue(entry)
    reloadState()
    return retried
  }

  /// Puts every refused, conflicted and parked entry back in the queue (see
  /// ``retryEntry(operationID:)``).
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written (the entries before the failure
  ///   are requeued, the others are kept as they were).
  @discardableResult
  package func retryAllEntries() throws -> [OutboxEntry] {
    defer { reloadState() }
    return try store.entries().filter { !$0.state.isPending }.map { try requeue($0) }
  }

  /// Drops an outbox entry with every local change to its record (the entry's and any later
  /// ones: they were made on top of it), and shows the server's copy again.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  package func discardEntry(operationID: UUID) throws -> (
    entry: OutboxEntry, record: LocalRecord?
  ) {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let after = try store.revert(entry.key)
    reloadState()
    return (entry, after)
  }

  private func requeue(_ entry: OutboxEntry) throws -> OutboxEntry {
    var base: Int?
    switch entry.state {
    case .pending:
      return entry
    case .rejected:
      break
    case .conflicted(let json):
      if json == .null {
        try resolveGone(entry, keepLocal: true)
        return try store.entries().first { $0.sequence == entry.sequence } ?? entry
      }
      base = (try? schema(of: entry).serverRecord(from: json))?.version
    case .parked:
      return try store.markPending(entry.id, baseVersion: nil)
    }
    return try store.requeue(entry.id, as: UUID(), baseVersion: base)
  }

  /// Settles an edit kept against a deletion on the server (decision 2401). The record's server
  /// copy says whether the server re-created the record from the edit: then keeping sends the
  /// edit on that version and taking the server's side deletes it again; else keeping sends the
  /// edit as a create and taking the server's side drops the record.
  private func resolveGone(_ entry: OutboxEntry, keepLocal: Bool) throws {
    let recreated = try store.record(entry.key)?.server
    switch (keepLocal, recreated) {
    case (true, let server?):
      try store.requeue(entry.id, as: UUID(), baseVersion: server.version)
    case (true, nil):
      try store.recreate(entry.id, as: UUID())
    case (false, let server?):
      try store.deleteAgain(entry.id, as: UUID(), onto: server)
    case (false, nil):
      try store.takeGone(entry.key)
    }
  }

  /// The record schema of an entry's collection (the contract's when it has no route).
  func schema(of entry: OutboxEntry) -> RecordSchema {
    route(for: entry.key.collection)?.decision.schema ?? .standard
  }
}
