/// Why an outbox entry waits, as `courier outbox` says it (decision 2401): what the next
/// replay does with it, read from the outbox alone. Pure: table-tested in `OutboxWaitTests`.
package enum OutboxWait: Sendable, Equatable {
  /// Pending, never sent: the next replay sends it.
  case next
  /// Pending, sent before (that many attempts) without a reply that proved it: the next replay
  /// sends it again, under the same key.
  case again(attempts: Int)
  /// Pending behind an earlier pending entry of its record (that entry's `sequence`): it goes
  /// once that one is applied, on the version it makes.
  case behind(Int64)
  /// Pending behind an earlier entry of its record that is conflicted or parked (its
  /// `sequence`): nothing of the record is sent until that one is settled.
  case held(Int64)
  /// Refused by the server; a later write of its record supersedes it.
  case refused
  /// In conflict with the server's record (or with its deletion), kept for the user.
  case conflict
  /// Parked: its replies never proved delivery while the server answered; `outbox retry`.
  case parked
  /// Pending, held back by the path policy on the path now (decision 2610): it goes when the
  /// path changes (an unmetered network, the login page passed).
  case path(PathPolicy.Wait)

  /// Each entry's wait.
  /// - Parameters:
  ///   - entries: every entry, in queue order.
  ///   - pathWait: why the path policy holds an entry back on the path now; nil when it does
  ///     not (the default: nothing is held).
  /// - Returns: the waits, one per entry, in the same order.
  package static func of(
    _ entries: [OutboxEntry], pathWait: (OutboxEntry) -> PathPolicy.Wait? = { _ in nil }
  ) -> [OutboxWait] {
    // The first entry of each record still in the way of its later ones, and whether it holds
    // them (conflicted, parked) or only goes first (pending).
    var first: [RecordKey: (sequence: Int64, holds: Bool)] = [:]
    return entries.map { entry in
      switch entry.state {
      case .rejected: return .refused
      case .conflicted, .parked:
        if first[entry.key]?.holds != true {
          first[entry.key] = (entry.sequence, true)
        }
        return entry.state.isParked ? .parked : .conflict
      case .pending:
        if let earlier = first[entry.key] {
          return earlier.holds ? .held(earlier.sequence) : .behind(earlier.sequence)
        }
        first[entry.key] = (entry.sequence, false)
        if let wait = pathWait(entry) { return .path(wait) }
        return entry.attempts == 0 ? .next : .again(attempts: entry.attempts)
      }
    }
  }

  /// A short name for `--json` (`next`, `again`, `behind`, `held`, `refused`, `conflict`,
  /// `parked`, `path`: `waits_on` then says which fact of the path).
  package var name: String {
    switch self {
    case .next: "next"
    case .again: "again"
    case .behind: "behind"
    case .held: "held"
    case .refused: "refused"
    case .conflict: "conflict"
    case .parked: "parked"
    case .path: "path"
    }
  }

  /// The entry it waits for, when it waits behind another of its record.
  package var waitsFor: Int64? {
    switch self {
    case .behind(let sequence), .held(let sequence): sequence
    case .next, .again, .refused, .conflict, .parked, .path: nil
    }
  }
}

extension OutboxEntryState {
  /// Whether the entry is parked.
  package var isParked: Bool {
    if case .parked = self { true } else { false }
  }
}
