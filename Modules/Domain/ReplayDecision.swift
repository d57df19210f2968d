#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Decides what the replay does with an outbox entry once the server answered (decisions 0410,
/// 0411, 0414, 2401): complete it, send it again on a new base, keep it conflicted, mark it
/// refused, settle an edit against a deletion by the policy, park it, or stop the replay.
///
/// Pure: every row is a table test (`ReplayDecisionTests`); the sync engine only carries the
/// step out against its store.
package struct ReplayDecision: Sendable {
  /// How version conflicts are settled.
  package var policy: ConflictPolicy
  /// How the collection's records name their id, version and update time (to read `current`).
  package var schema: RecordSchema
  /// How many last-write-wins re-sends of one entry a replay allows before keeping it
  /// conflicted (two clients fighting must not loop forever).
  package var maxResends: Int
  /// Settles the fields both sides changed under `ConflictPolicy.merge`; nil for last write
  /// wins per field (`ThreeWayMerge.lastWriteWins`).
  package var resolver: FieldResolver?
  /// What the collection's server answers mean: which `409` codes are a stale base version and
  /// which `404` to a delete means it is already applied.
  package var answers: ServerAnswers = .contract
  /// How many sends of an entry may end in a reply that proves nothing (`notTheServer`,
  /// `invalidResponse`) before it is parked instead of stopping the replay (decision 2401).
  package var parkAfter = 3

  /// Creates a decision.
  /// - Parameters:
  ///   - policy: the conflict policy.
  ///   - schema: the collection's record schema.
  ///   - maxResends: the re-send bound per entry and replay.
  ///   - resolver: the merge policy's resolver for fields both sides changed.
  package init(
    policy: ConflictPolicy, schema: RecordSchema = .standard, maxResends: Int = 3,
    resolver: FieldResolver? = nil
  ) {
    self.policy = policy
    self.schema = schema
    self.maxResends = maxResends
    self.resolver = resolver
  }

  /// Creates the decision of a declared collection: its schema and its answer rules.
  /// - Parameters:
  ///   - policy: the conflict policy.
  ///   - collection: the collection's declaration.
  ///   - maxResends: the re-send bound per entry and replay.
  ///   - resolver: the merge policy's resolver for fields both sides changed.
  package init(
    policy: ConflictPolicy, collection: CollectionDescription, maxResends: Int = 3,
    resolver: FieldResolver? = nil
  ) {
    self.init(
      policy: policy, schema: collection.schema, maxResends: maxResends, resolver: resolver)
    answers = collection.answers
  }

  /// Decides the step for one entry.
  /// - Parameters:
  ///   - entry: the entry sent (its operation: kind, base version, edit time).
  ///   - answer: what came back.
  ///   - resends: how many times this replay already re-sent the entry after a conflict.
  ///   - base: the server's copy the local record holds (`LocalRecord.server`), for an entry
  ///     written before Courier kept the exact base copy with the operation: the merge policy
  ///     merges against the operation's `basePayload` when it has one, else against this copy
  ///     when its version is the write's base version, and without a base otherwise.
  /// - Returns: the step.
  package func step(
    for entry: OutboxEntry, answer: ReplayAnswer, resends: Int = 0, base: ServerRecord? = nil
  ) -> ReplayStep {
    let error: CourierError
    switch answer {
    case .delivered(let record):
      return .complete(serverRecord: record)
    case .recreated(let record):
      return gone(recreated: record)
    case .failed(let failure):
      error = failure
    }
    let kind = entry.operation.kind
    // Already gone: the delete's effect holds (a replay after a lost response), when the 404
    // is the server's own and not a portal's page.
    if kind == .delete, answers.isAlreadyGone(error) {
      return .complete(serverRecord: nil)
    }
    // A reply that proves nothing stops the replay and keeps the entry pending with its
    // Idempotency-Key (0414), up to its bound; then it is parked, if the server answers
    // (decision 2401).
    if error.kind == .notTheServer || error.kind == .invalidResponse {
      return entry.attempts >= parkAfter ? .park(error) : .stop(error)
    }
    // Only the server's own refusal is recorded against a write. Anything else stops the
    // replay and keeps the entry pending with its Idempotency-Key (0414).
    guard error.kind == .business || error.kind == .conflict else { return .stop(error) }
    // The record was deleted on the server: a delete's effect holds; an edit is settled by the
    // policy (decision 2401).
    if kind != .create, answers.isRecordGone(error) {
      return kind == .delete ? .complete(serverRecord: nil) : gone(recreated: nil)
    }
    if answers.isConflict(error) {
      return conflict(entry, current: error.current, resends: resends, base: base)
    }
    return .reject(message: error.serverMessage ?? error.userMessage, code: error.code)
  }

  /// An edit against a deletion on the server, settled by the policy (decision 2401).
  /// - Parameter recreated: the record the server made anew from the edit, when its `PUT`
  ///   creates a missing record; nil when it answered that the record is gone.
  private func gone(recreated: ServerRecord?) -> ReplayStep {
    if policy == .lastWriteWins {
      // The edit wins: the record is made again (already, when the server re-created it).
      return recreated.map { .complete(serverRecord: $0) } ?? .recreate
    }
    if policy == .serverWins {
      // The deletion wins: a re-creation the server made is deleted again.
      return recreated.map { .deleteAgain($0) } ?? .takeGone
    }
    // manual, merge (a deletion against an edit has no field-by-field answer): the user decides.
    return .keepGone(adopting: recreated)
  }

  private func conflict(
    _ entry: OutboxEntry, current: JSONValue?, resends: Int, base: ServerRecord?
  ) -> ReplayStep {
    let server = current.flatMap { try? schema.serverRecord(from: $0) }
    if policy == .merge, let server {
      return merge(entry, current: current ?? .null, server: server, resends: resends, base: base)
    }
    var resolution = policy.resolve(localEditAt: entry.operation.enqueuedAt, server: server)
    if case .resend = resolution, resends >= maxResends { resolution = .keepBoth }
    switch resolution {
    case .resend(let base):
      return .resend(baseVersion: base, adopting: server)
    case .takeServer:
      return .takeServer(server)
    case .keepBoth:
      return .keepConflict(current: current ?? .null, adopting: server)
    }
  }

  private func merge(
    _ entry: OutboxEntry, current: JSONValue, server: ServerRecord, resends: Int,
    base: ServerRecord?
  ) -> ReplayStep {
    // Two clients merging in turn converge, but a server that keeps changing must not loop.
    guard resends < maxResends else { return .keepConflict(current: current, adopting: server) }
    let operation = entry.operation
    // The exact copy the write started from; for an older entry without one, the record's
    // server copy when it is still of the write's base version.
    let basePayload: JSONValue?
    let baseKnown: Bool
    if let exact = operation.basePayload, operation.baseVersion != nil {
      (basePayload, baseKnown) = (exact, true)
    } else if let base, operation.baseVersion != nil, base.version == operation.baseVersion {
      (basePayload, baseKnown) = (base.payload, true)
    } else {
      (basePayload, baseKnown) = (nil, false)
    }
    let resolve =
      resolver
      ?? ThreeWayMerge.lastWriteWins(
        localEditAt: operation.enqueuedAt, serverUpdatedAt: server.updatedAt)
    let mine: JSONValue? = operation.kind == .delete ? nil : operation.payload ?? .object([:])
    switch ThreeWayMerge.merge(
      base: basePayload, mine: mine, theirs: server.payload, baseKnown: baseKnown,
      resolve: resolve)
    {
    case .merged(let payload):
      return .resendMerged(payload: payload, onto: server)
    case .deleted:
      // Only a local delete of a record the server left as it was: send it on the new version.
      return .resend(baseVersion: server.version, adopting: server)
    case .conflict:
      return .keepConflict(current: current, adopting: server)
    }
  }
}
