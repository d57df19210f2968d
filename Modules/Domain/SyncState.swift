import Foundation

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
  /// The last failure of a replay or a refresh; cleared by the next success.
  public var lastError: CourierError?
  /// When a replay last finished with an empty queue, or a refresh succeeded.
  public var lastSyncAt: Date?

  /// Creates a state.
  /// - Parameters:
  ///   - path: the path status.
  ///   - isSyncing: whether a sync runs.
  ///   - pendingCount: pending entries.
  ///   - rejected: rejected entries.
  ///   - conflicted: conflicted entries.
  ///   - lastError: the last failure.
  ///   - lastSyncAt: the last success.
  public init(
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
  public var isOnline: Bool { path == .satisfied || path == .unknown }
}

/// What one replay of the outbox did.
public struct ReplayReport: Sendable, Equatable {
  /// Operations the server applied (completed entries).
  public var sent: Int = 0
  /// Operations the server refused (marked rejected, their local change rolled back).
  public var rejected: Int = 0
  /// Conflicts met, by how they were settled.
  public var conflictsResent: Int = 0
  /// Conflicts settled by adopting the server's record.
  public var conflictsTakenFromServer: Int = 0
  /// Conflicts kept for the user (manual policy).
  public var conflictsKept: Int = 0
  /// Entries still pending when the replay ended.
  public var pending: Int = 0
  /// Why the replay stopped early (a transient failure), nil when the queue was drained.
  public var stoppedBy: CourierError?

  /// Creates an empty report.
  public init() {}

  /// Every conflict met.
  public var conflicts: Int { conflictsResent + conflictsTakenFromServer + conflictsKept }
}
