#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a completed write does to its record's other queued writes (`LocalStorePlan.complete`):
/// every pending entry of the record, other than the one completed, that was based on the same
/// server version as it moves onto the server's new version, with the server's record as its
/// base copy (it was made on top of the completed change, which the server now holds).
///
/// One value stands for all those entries, so a store can apply it with one statement and a
/// replay can apply it to the entries it holds (`ReplaySchedule.apply`) without reading them
/// back: a replay of 10,000 queued edits over 1,000 records moves 45,000 entries this way.
package struct OutboxRebase: Sendable, Equatable, Codable {
  /// The record.
  package var key: RecordKey
  /// The sequence number of the entry completed (never moved itself).
  package var completed: Int64
  /// The base version the entries moved were on (the completed entry's; nil for a create).
  package var fromVersion: Int?
  /// The server's record after the completion: the new base version and base copy.
  package var server: ServerRecord

  /// Creates a rebase.
  /// - Parameters:
  ///   - key: the record.
  ///   - completed: the sequence number of the entry completed.
  ///   - fromVersion: the base version of the entries to move.
  ///   - server: the server's record after the completion.
  package init(key: RecordKey, completed: Int64, fromVersion: Int?, server: ServerRecord) {
    self.key = key
    self.completed = completed
    self.fromVersion = fromVersion
    self.server = server
  }

  /// The rebase a completion makes: none for a delete or when the server returned no record.
  /// - Parameters:
  ///   - entry: the entry completed.
  ///   - serverRecord: the server's record after it.
  package init?(completing entry: OutboxEntry, serverRecord: ServerRecord?) {
    guard entry.operation.kind != .delete, let serverRecord else { return nil }
    self.init(
      key: entry.key, completed: entry.sequence, fromVersion: entry.operation.baseVersion,
      server: serverRecord)
  }

  /// An entry after the rebase, or nil when the rebase does not move it (another record, the
  /// entry completed, not pending, or on another base version).
  /// - Parameter entry: the entry.
  /// - Returns: the entry on the server's version, or nil.
  package func rebased(_ entry: OutboxEntry) -> OutboxEntry? {
    guard entry.key == key, entry.sequence != completed, entry.state.isPending,
      entry.operation.baseVersion == fromVersion
    else { return nil }
    var moved = entry
    moved.operation = entry.operation.rebased(onto: server.version, payload: server.payload)
    return moved
  }
}
