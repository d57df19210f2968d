#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How many entries the outbox holds, by state.
public struct OutboxCounts: Sendable, Equatable {
  /// Entries waiting to be sent.
  package var pending: Int
  /// Entries the server refused.
  package var rejected: Int
  /// Entries in conflict with the server's record.
  package var conflicted: Int
  /// Entries parked: their replies never proved delivery while the server answered (decision
  /// 2401).
  package var parked: Int = 0

  /// Creates counts.
  /// - Parameters:
  ///   - pending: pending entries.
  ///   - rejected: rejected entries.
  ///   - conflicted: conflicted entries.
  package init(pending: Int = 0, rejected: Int = 0, conflicted: Int = 0) {
    self.pending = pending
    self.rejected = rejected
    self.conflicted = conflicted
  }

  /// The counts of `entries`.
  /// - Parameter entries: outbox entries.
  package init(_ entries: some Sequence<OutboxEntry>) {
    self.init()
    for entry in entries {
      switch entry.state {
      case .pending: pending += 1
      case .rejected: rejected += 1
      case .conflicted: conflicted += 1
      case .parked: parked += 1
      }
    }
  }

  /// Every entry.
  package var total: Int { pending + rejected + conflicted + parked }
}
