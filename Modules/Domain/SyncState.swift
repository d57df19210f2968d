#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the sync engine shows: connectivity, activity, the outbox, the last failure. Published
/// as a stream by `SyncEngine.states()`, the current value first.
public struct SyncState: Sendable, Equatable {
  /// Whether the path monitor reports a usable path (`unknown` counts as online: nothing says
  /// the contrary, and a send will tell).
  public var path: PathStatus
  /// Whether a replay or a refresh is running.
  public var isSyncing: Bool
  /// Entries waiting to be sent.
  public var pendingCount: Int
  /// Entries the server refused, with its message.
  public var rejected: [OutboxEntry]
  /// Entries in conflict with the server's record (manual policy).
  public var conflicted: [OutboxEntry]
  /// Entries parked: their replies never proved delivery while the server answered (decision
  /// 2401); `retry` sends them again.
  package var parked: [OutboxEntry] = []
  /// The last failure of a replay or a refresh; cleared by the next success.
  public var lastError: CourierError?
  /// When a replay last finished with an empty queue, or a refresh succeeded.
  package var lastSyncAt: Date?

  /// Creates a state.
  /// - Parameters:
  ///   - path: the path status.
  ///   - isSyncing: whether a sync runs.
  ///   - pendingCount: pending entries.
  ///   - rejected: rejected entries.
  ///   - conflicted: conflicted entries.
  ///   - lastError: the last failure.
  ///   - lastSyncAt: the last success.
  package init(
    path: PathStatus = .unknown, isSyncing: Bool = false, pendingCount: Int = 0,
    rejected: [OutboxEntry] = [], conflicted: [OutboxEntry] = [], lastError: CourierError? = nil,
    lastSyncAt: Date? = nil
  ) {
    self.path = path
    self.isSyncing = isSyncing
    self.pendingCount = pendingCount
    self.rejected = rejected
    self.conflicted = conflicted
    self.lastError = lastError
    self.lastSyncAt = lastSyncAt
  }

  /// Whether the device looks online (`satisfied`, or not known yet).
  package var isOnline: Bool { path == .satisfied || path == .unknown }
}
