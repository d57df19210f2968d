import CourierCore
import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The outbox of a session's local store: every collection's waiting, refused, conflicted and
/// parked writes and the queued uploads, in the order the session's `sync()` and `watch()` send
/// them, with the state those publish. Get it with ``CourierSession/outbox(warn:)``.
public struct SessionOutbox: Sendable {
  private let shared: OutboxSync

  init(shared: OutboxSync) { self.shared = shared }

  /// The store's replayer: one per store, it sends every collection's entries in outbox order,
  /// each through its collection's route; the session's `sync()` and `watch()` run it.
  package var replayer: OutboxReplayer { shared.replayer }

  /// The entries, in the order they are sent.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func entries() throws -> [OutboxEntry] { try shared.store.entries() }

  /// How many writes wait to be sent, as the store counts them: one query, without the
  /// replayer's state (which reads the whole outbox when it is first made).
  /// - Returns: the number of pending entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func pendingCount() throws -> Int { try shared.store.counts().pending }

  /// The connectivity, activity and outbox now.
  public var state: SyncState { shared.replayer.state }

  /// The path the path policy is checked against now (decision 2610), for a command that says
  /// why entries wait: the monitor's snapshot, after a captive-portal check when `checking`
  /// and the path is usable (one request, never made otherwise).
  /// - Parameter checking: whether to check for a captive portal first.
  /// - Returns: the path.
  package func policyPath(checking: Bool) async -> NetworkPath {
    let monitor = shared.replayer.pathMonitor
    if checking, let probing = monitor as? PortalProbingMonitor {
      let status = await probing.snapshot().status
      if status == .satisfied || status == .unknown { await probing.recheck() }
    }
    return await monitor?.snapshot() ?? .unknown
  }

  /// The current state, then each change (the newest only, for a slow reader).
  /// - Returns: the stream.
  public func states() -> AsyncStream<SyncState> { shared.replayer.states() }

  /// Puts a refused or conflicted write back in the queue under a new `Idempotency-Key` (a
  /// conflicted one rebased on the server's version it was shown, or sent as a new record when
  /// the server deleted it), or a parked one under its own (the server may hold it; decision
  /// 2401).
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry, pending again.
  /// - Throws: `StoreError.notFound` for an unknown id; `StoreError` when it cannot be saved.
  @discardableResult
  public func retry(operationID: UUID) throws -> OutboxEntry {
    let entry = try shared.replayer.retryEntry(operationID: operationID)
    shared.observation.recordOutbox()
    return entry
  }

  /// Puts every refused, conflicted and parked write back in the queue.
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written (the entries before the failure
  ///   are requeued, the others are kept as they were).
  @discardableResult
  public func retryAll() throws -> [OutboxEntry] {
    let entries = try shared.replayer.retryAllEntries()
    shared.observation.recordOutbox()
    return entries
  }

  /// Drops a write with every later local change to its record, and shows the server's copy
  /// again; a queued upload's kept bytes go with it.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped, and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` for an unknown id; `StoreError` when it cannot be saved.
  @discardableResult
  public func discard(operationID: UUID) throws -> (entry: OutboxEntry, record: LocalRecord?) {
    let dropped = try shared.replayer.discardEntry(operationID: operationID)
    shared.tidy()
    shared.observation.recordOutbox()
    return dropped
  }
}
