/// The rule for folding a new operation into the record's last unsent one, so a burst of edits
/// made offline sends one request. Only an entry that is pending and was never handed to the
/// network (`attempts == 0`) may be folded: once sent, its `Idempotency-Key` is bound to its
/// payload and a merged payload would be refused (`idempotency_key_reused`).
package enum OutboxCoalescing {
  /// What to do with the earlier entry and the later operation.
  package enum Decision: Sendable, Equatable {
    /// Keep the earlier entry and append the later operation.
    case append
    /// Replace the earlier entry by this one operation (it keeps the earlier's place).
    case merge(OutboxOperation)
    /// Remove the earlier entry and drop the later operation: nothing to send.
    case dropBoth
  }

  /// Decides how a later operation combines with the record's last entry.
  ///
  /// - create + update → one create with the update's payload;
  /// - create + delete → nothing (the server never heard of the record);
  /// - update + update → one update with the later payload and the first base version;
  /// - update + delete → one delete with the update's base version;
  /// - anything else, another record, or an entry already sent, rejected or conflicted → append.
  ///
  /// The merged operation takes the later operation's id (a fresh `Idempotency-Key`, never
  /// sent), the earlier one's `enqueuedAt` (how long the user has been waiting) and its base
  /// (version and copy: the merged write started from there).
  /// - Parameters:
  ///   - earlier: the record's last entry in the outbox.
  ///   - later: the new operation.
  /// - Returns: the decision.
  package static func decide(earlier: OutboxEntry, later: OutboxOperation) -> Decision {
    guard earlier.isUnsent, earlier.key == later.key else { return .append }
    let first = earlier.operation
    func merged(_ kind: OutboxKind, payload: JSONValue?) -> Decision {
      .merge(
        OutboxOperation(
          id: later.id, key: later.key, kind: kind, payload: payload,
          baseVersion: first.baseVersion, enqueuedAt: first.enqueuedAt,
          basePayload: first.basePayload))
    }
    switch (first.kind, later.kind) {
    case (.create, .update): return merged(.create, payload: later.payload)
    case (.create, .delete): return .dropBoth
    case (.update, .update): return merged(.update, payload: later.payload)
    case (.update, .delete): return merged(.delete, payload: nil)
    case (.create, .create), (.update, .create), (.delete, _): return .append
    }
  }
}
