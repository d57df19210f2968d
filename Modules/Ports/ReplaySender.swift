import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends one outbox entry to the server and says what came back, for the replay loop: the
/// loop counts the attempt, calls the sender of the entry's collection, and carries out what
/// `ReplayDecision` decides from the answer. A record collection's sender makes the JSON
/// request `ReplayRequest` describes; a queued upload's sender transfers its stored bytes.
///
/// Cancellation is the calling task's: a cancelled send answers `.failed` with a `cancelled`
/// error, and the entry stays pending with its attempt counted.
package protocol ReplaySender: Sendable {
  /// Sends one attempt of an entry.
  /// - Parameters:
  ///   - entry: the entry, its attempt already counted in the store.
  ///   - progress: called with the bytes the server confirmed so far, for a sender that moves
  ///     a large body (an upload resumed at an offset starts there, not at 0); nil when no one
  ///     follows it.
  /// - Returns: `.delivered` only when the reply proves the intended server applied the write
  ///   (`DeliveryProof`); `.failed` with the classified error otherwise.
  func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer

  /// Where a replay sending this sender's entries one after another should run
  /// (`Transport.taskExecutor`); nil (the default) to run where it would anyway. A sender that
  /// names one must not block in `send` (a semaphore, a synchronous read of a large file): it
  /// would hold up that executor's thread, the transport's.
  var taskExecutor: (any TaskExecutor)? { get }
}

extension ReplaySender {
  /// None: the replay's sends run where its task would anyway.
  package var taskExecutor: (any TaskExecutor)? { nil }
}

/// A sender that can also ask the server about an entry's record without writing, so that the
/// replay tells a write whose replies prove nothing from a network that answers in the server's
/// place (decision 2401): before an entry is parked, the pass probes; only when the server
/// itself answers is the entry parked and the queue behind it sent.
package protocol ReplayProbing: ReplaySender {
  /// Reads the entry's record (`GET <path>/<id>` for a record collection).
  /// - Parameter entry: the entry about to be parked.
  /// - Returns: nil when the server itself answered (the record, or its own refusal such as a
  ///   `404` with its error body); else why not (a page, a redirect, offline...).
  func probe(_ entry: OutboxEntry) async -> CourierError?
}
