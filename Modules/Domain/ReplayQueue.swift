#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Walks one read of the outbox in queue order and says which entry the replay sends next
/// (decision 0410): pending entries in sequence order; none of a record behind its conflicted
/// or parked entry (they were based on a stale version, or on a write not proven) or behind an
/// entry the replay just kept conflicted (`hold`); and with each entry, its record's earlier
/// refused entries, which the newer write supersedes and the replay removes before sending it.
///
/// Pure: table-tested in `ReplayQueueTests`; the sync engine asks it, then sends.
package struct ReplayQueue: Sendable {
  private let entries: [OutboxEntry]
  private var position = 0
  private var blocked = Set<RecordKey>()
  private var refusedBefore: [RecordKey: [UUID]] = [:]

  /// Starts a walk over entries read from the outbox.
  /// - Parameter entries: every entry, in queue order (pending, rejected and conflicted).
  package init(_ entries: [OutboxEntry]) {
    self.entries = entries
  }

  /// The next entry to send, with the operation ids of its record's earlier refused entries
  /// that it supersedes; nil when no entry is left to send in this read.
  /// - Returns: the entry and the ids to remove before sending it.
  package mutating func next() -> (entry: OutboxEntry, superseded: [UUID])? {
    while position < entries.count {
      let entry = entries[position]
      position += 1
      switch entry.state {
      case .conflicted, .parked:
        blocked.insert(entry.key)
        continue
      case .rejected:
        refusedBefore[entry.key, default: []].append(entry.id)
        continue
      case .pending:
        break
      }
      if blocked.contains(entry.key) { continue }
      return (entry, refusedBefore.removeValue(forKey: entry.key) ?? [])
    }
    return nil
  }

  /// Holds a record's later entries: its entry was just kept conflicted.
  /// - Parameter key: the record.
  package mutating func hold(_ key: RecordKey) {
    blocked.insert(key)
  }
}
