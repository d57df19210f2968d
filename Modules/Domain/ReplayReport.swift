#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What one replay of the outbox did.
public struct ReplayReport: Sendable, Equatable {
  /// Operations the server applied (completed entries).
  public var sent: Int = 0
  /// Operations the server refused (marked rejected, their local change rolled back).
  public var rejected: Int = 0
  /// Conflicts met, by how they were settled.
  package var conflictsResent: Int = 0
  /// Conflicts settled by adopting the server's record.
  package var conflictsTakenFromServer: Int = 0
  /// Conflicts kept for the user (manual policy).
  package var conflictsKept: Int = 0
  /// Conflicts settled by a three-way merge and sent again (merge policy).
  package var conflictsMerged: Int = 0
  /// Edits of a record deleted on the server that re-created it (last write wins, decision
  /// 2401): already, when the server's `PUT` made it anew, or sent again as a create.
  package var conflictsRecreated: Int = 0
  /// Of the conflicts, those against a record deleted on the server (edit against deletion),
  /// whichever way they were settled.
  package var conflictsGone: Int = 0
  /// Of those, the edits dropped because the deletion won (server wins; counted in
  /// `conflictsTakenFromServer` too).
  package var conflictsGoneDropped: Int = 0
  /// Entries parked: their replies proved nothing after their bounded attempts, while the
  /// server answered (decision 2401).
  package var parked: Int = 0
  /// Entries still pending when the replay ended.
  public var pending: Int = 0
  /// Pending entries of collections that have no sender registered (they wait, with their
  /// record's later entries, until one is): counted in `pending` too.
  package var withoutSender: Int = 0
  /// Why the replay stopped early (a transient failure), nil when the queue was drained.
  public var stoppedBy: CourierError?

  /// Creates an empty report.
  package init() {}

  /// Every conflict met.
  package var conflicts: Int {
    conflictsResent + conflictsTakenFromServer + conflictsKept + conflictsMerged
      + conflictsRecreated
  }
}
