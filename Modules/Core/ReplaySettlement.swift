import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
    case .recreate:
      try store.recreate(entry.id, as: UUID())
    case .takeGone:
      try store.takeGone(entry.key)
    case .deleteAgain(let server):
      try store.deleteAgain(entry.id, as: UUID(), onto: server)
    case .keepGone(let server):
      let kept = try store.keepGone(entry.id, adopting: server)
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.conflicted.append(kept)
      }
    case .park(let error):
      let parked = try store.markParked(
        entry.id, reason: Self.parkReason(error), code: error.code)
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.parked.append(parked)
        $0.lastError = error
      }
    }
    var carried = outcome
    carried.step = step
    return carried
  }

  /// Why an entry is parked, for a person: what its reply lacked (decision 2401). A parked
  /// entry's reply came while the server answered other requests, so the reason is not the
  /// "Wi-Fi login page?" of a stop.
  static func parkReason(_ error: CourierError) -> String {
    let shortfall: String
    switch error.code.flatMap(DeliveryProof.Shortfall.init(rawValue:)) {
    case .staleVersion?: shortfall = "the record it returned is not newer than the one edited"
    case .otherRecord?: shortfall = "it returned another record"
    case .notRecord?: shortfall = "it was not the record"
    case .notJSON?: shortfall = "it was not JSON"
    case .unexpectedStatus?: shortfall = "its status is not one the server gives for it"
    case .unexpectedBody?: shortfall = "it carried a body where none was due"
    case .refusalWithoutServerBody?: shortfall = "it was a refusal without the server's message"
    case .notUploadRecord?: shortfall = "it did not describe the stored file"
    case nil:
      shortfall =
        error.kind == .invalidResponse
        ? "it could not be understood" : "it was not the server's answer"
    }
    let status = error.status.map { " (status \($0))" } ?? ""
    return "The server answered, but its reply to this write never proved that it was applied: "
      + "\(shortfall)\(status). Kept, not sent again until retried."
  }
}
