#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Which outbox entries one pass sends next, a window at a time (decisions 0410, 1204): like
/// `ReplayQueue`, pending entries in queue order, none of a record behind its conflicted or
/// parked entry or behind one the pass kept conflicted or could not route (`hold`), and with
/// each entry its record's earlier refused entries, which it supersedes; and besides, **at most
/// one entry of a record in a window, and a record's next entry only once the window before
/// settled** (its completion rebases it: `apply`), so the order of each record's writes is kept
/// however the window is sent.
///
/// - `sequential`: a window also stops at the first entry whose record is already in it, so a
///   window sent in its order keeps the outbox's global order (FIFO across records).
/// - concurrent: a window takes the first pending entry of each record not yet settled, in queue
///   order, skipping a record's later entries; across records the order is then the senders'.
///
/// Pure: table-tested in `ReplayScheduleTests`; the replayer commits each window's attempts,
/// sends it, and settles it.
package struct ReplaySchedule: Sendable {
  /// One entry to send, with the operation ids of its record's earlier refused entries that it
  /// supersedes (to remove before it is sent).
  package struct Pick: Sendable, Equatable {
    /// The outbox entry to send next, as the pass read it.
    package var entry: OutboxEntry
    /// Earlier refused entries of its record.
    package var superseded: [UUID]
  }

  private var entries: [OutboxEntry]
  private var consumed: [Bool]
  /// The first index not yet consumed.
  private var start = 0
  private var blocked = Set<RecordKey>()
  private var unsettled = Set<RecordKey>()
  private var refusedBefore: [RecordKey: [UUID]] = [:]
  private var indicesByKey: [RecordKey: [Int]] = [:]

  /// Starts a pass over entries read from the outbox.
  /// - Parameter entries: every entry, in queue order (pending, rejected and conflicted).
  package init(_ entries: [OutboxEntry]) {
    self.entries = entries
    consumed = Array(repeating: false, count: entries.count)
    for (index, entry) in entries.enumerated() {
      indicesByKey[entry.key, default: []].append(index)
    }
  }

  /// Whether entries are left to pick (now or after a settle).
  package var isEmpty: Bool { start >= entries.count }

  /// The next window: up to `limit` entries, one per record, none of a record still in flight.
  /// - Parameters:
  ///   - limit: the most entries in the window (at least 1).
  ///   - sequential: whether the window stops at the first entry of a record already in it or
  ///     in flight (global order kept), instead of skipping that record's entries.
  ///   - routed: whether an entry's collection can be sent; an entry that cannot is consumed,
  ///     its record held, and counted in `unrouted`.
  ///   - unrouted: incremented for each entry `routed` turned down.
  /// - Returns: the window, in queue order; empty when nothing can go before a settle (or at
  ///   all).
  package mutating func nextWindow(
    limit: Int, sequential: Bool, routed: (OutboxEntry) -> Bool = { _ in true },
    unrouted: inout Int
  ) -> [Pick] {
    var window: [Pick] = []
    var inWindow = Set<RecordKey>()
    var index = start
    scan: while index < entries.count, window.count < max(1, limit) {
      defer { index += 1 }
      guard !consumed[index] else { continue }
      let entry = entries[index]
      let key = entry.key
      if blocked.contains(key) {
        consume(index)
        continue
      }
      if unsettled.contains(key) || inWindow.contains(key) {
        // A record's later entry waits for its earlier one to settle.
        if sequential { break scan }
        continue
      }
      switch entry.state {
      case .conflicted, .parked:
        blocked.insert(key)
        consume(index)
        continue
      case .rejected:
        refusedBefore[key, default: []].append(entry.id)
        consume(index)
        continue
      case .pending:
        break
      }
      consume(index)
      guard routed(entry) else {
        unrouted += 1
        blocked.insert(key)
        continue
      }
      inWindow.insert(key)
      window.append(Pick(entry: entry, superseded: refusedBefore.removeValue(forKey: key) ?? []))
    }
    unsettled.formUnion(inWindow)
    return window
  }

  /// Says the window's records settled: their next entries may go in the next window.
  /// - Parameter keys: the records settled.
  package mutating func settle(_ keys: some Sequence<RecordKey>) {
    unsettled.subtract(keys)
  }

  /// Holds a record's later entries: its entry was just kept conflicted (or cannot be sent).
  /// - Parameter key: the record.
  package mutating func hold(_ key: RecordKey) {
    blocked.insert(key)
  }

  /// Applies the rebases a window's completions made (`LocalStore.completeAll`) to the entries
  /// not yet picked, as the store applied them: a record's next entry then goes on the server's
  /// new version without being read again.
  /// - Parameter rebases: the rebases.
  package mutating func apply(_ rebases: [OutboxRebase]) {
    for rebase in rebases {
      for index in indicesByKey[rebase.key] ?? [] where !consumed[index] {
        if let moved = rebase.rebased(entries[index]) { entries[index] = moved }
      }
    }
  }

  private mutating func consume(_ index: Int) {
    consumed[index] = true
    while start < entries.count, consumed[start] { start += 1 }
  }
}
