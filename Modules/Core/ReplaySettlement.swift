import CourierDomain
import CourierPorts

/// Carries out what `ReplayPass` settles against the store, and publishes what it changes: a
/// window's completions in one commit, then each other step's store calls. The rules are
/// `ReplayDecision`'s and `ReplayPass`'s; this only executes them.
struct ReplaySettlement {
  let store: any LocalStore
  let publisher: SyncStatePublisher
  /// The record schema of an entry's collection (to show a conflict a store could not merge).
  let schema: (OutboxEntry) -> RecordSchema

  /// Commits a window's completions in one commit.
  /// - Parameters:
  ///   - completions: the entries the server proved it applied.
  ///   - delivered: how many of them a reply proved (the others were deletes already gone).
  /// - Returns: the rebases the completions made.
  func complete(_ completions: [OutboxCompletion], delivered: Int) throws -> [OutboxRebase] {
    let rebases = try store.completeAll(completions)
    publisher.update { $0.pendingCount = max(0, $0.pendingCount - delivered) }
    return rebases
  }

  /// Carries out one step other than a completion.
  /// - Parameter outcome: the entry, its answer and its step.
  /// - Returns: the outcome with the step carried out: a merge the store cannot make
  ///   (`StoreError.unusable`) is kept as a conflict for the user instead, nothing dropped.
  func record(_ outcome: ReplayOutcome) throws -> ReplayOutcome {
    let entry = outcome.entry
    var step = outcome.step
    if case .resendMerged(let payload, let server) = step {
      do {
        try store.rebase(entry.id, payload: payload, onto: server)
        return outcome
      } catch let error as StoreError where error.code == .unusable {
        step = .keepConflict(current: schema(entry).json(for: server), adopting: server)
      }
    }
    switch step {
    case .complete, .stop, .resendMerged:
      break  // completions are committed together; a stop ends the pass; merges are above
    case .resend(let base, let server):
      if let server { try store.applyServerRecord(server, key: entry.key) }
      try store.markPending(entry.id, baseVersion: base)
    case .takeServer(let server):
      try store.revert(entry.key)
      if let server { try store.applyServerRecord(server, key: entry.key) }
    case .keepConflict(let current, let server):
      if let server { try store.applyServerRecord(server, key: entry.key) }
      let kept = try store.markConflicted(entry.id, serverRecord: current)
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.conflicted.append(kept)
      }
    case .reject(let message, let code):
      let rejected = try store.markRejected(entry.id, message: message, code: code)
      let error: CourierError? =
        if case .failed(let error) = outcome.answer { error } else { nil }
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.rejected.append(rejected)
        $0.lastError = error
      }
    }
    var carried = outcome
    carried.step = step
    return carried
  }
}
