#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the replay does with one outbox entry after the server answered: decided by
/// `ReplayDecision`, carried out by the sync engine against the local store.
package enum ReplayStep: Sendable, Equatable {
  /// The server applied it: remove the entry and adopt the server's record (nil for a delete,
  /// or a delete found already applied).
  case complete(serverRecord: ServerRecord?)
  /// A conflict the local write wins: adopt the server's record as the new base (when one was
  /// readable) and send the same write again on `baseVersion`, under a new Idempotency-Key.
  case resend(baseVersion: Int, adopting: ServerRecord?)
  /// A conflict settled by a three-way merge (`ConflictPolicy.merge`): replace the entry's
  /// fields with `payload`, adopt the server's record `onto` as the new base, and send it again
  /// on that version under a new Idempotency-Key.
  case resendMerged(payload: JSONValue, onto: ServerRecord)
  /// A conflict the server's record wins: drop every local change to the record and adopt it.
  case takeServer(ServerRecord?)
  /// A conflict kept for the user: mark the entry conflicted with the server's record as sent
  /// (`current`, `.null` when absent), adopt it as the server copy when readable, and hold the
  /// record's later entries.
  case keepConflict(current: JSONValue, adopting: ServerRecord?)
  /// A refusal by the server itself: mark the entry rejected with its message and code; the
  /// queue goes on.
  case reject(message: String, code: String?)
  /// Anything else (transient, session, local, unreadable reply): keep the entry pending with
  /// its attempt counted and stop the replay with this error.
  case stop(CourierError)

  // An edit or a delete against a record the server deleted (decision 2401).

  /// The local write wins against the deletion: send it again as a create (no base version,
  /// so it cannot replace a record that exists), under a new Idempotency-Key; the record's
  /// server copy is dropped.
  case recreate
  /// The deletion wins: drop every local change to the record, and the record.
  case takeGone
  /// The deletion wins, but the server re-created the record from this write (`recreated`):
  /// the entry becomes a delete of that version under a new Idempotency-Key, the record's other
  /// local changes are dropped and it shows as deleted.
  case deleteAgain(ServerRecord)
  /// Kept for the user: mark the entry conflicted with `.null` (the server has no record to
  /// show), hold the record's later entries, and make `adopting` the record's server copy: the
  /// server's re-creation from this write, or none.
  case keepGone(adopting: ServerRecord?)

  /// Parked: the reply did not prove the write after its bounded attempts; once the server
  /// is shown to answer (`ReplayPass` probes it), the entry is set aside with this reason and
  /// the writes behind it that do not depend on it go on. Otherwise the replay stops as for
  /// `stop`.
  case park(CourierError)
}
