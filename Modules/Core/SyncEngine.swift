import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Keeps one collection of records in sync between a local store and the server: a small façade
/// over the three parts that do the work (decision 1202).
///
/// - Reads are stale-while-revalidate (`CollectionReader`): `cached()` shows the stored records
///   at once with their age; `refresh()` asks the server with `If-None-Match` and keeps the
///   stored records on a 304 or a failure (nothing is wiped by a network error).
/// - Writes (`create`, `update`, `delete`) are applied optimistically and enqueued in one
///   transaction, then the store's run loop is asked for a pass.
/// - Sending is the store's `OutboxReplayer`'s: `replay()` sends the whole outbox (every
///   collection of the store) in queue order, each entry through its collection's sender. A
///   transient failure stops it and keeps everything; a business refusal marks the entry
///   rejected (the local change stays visible, flagged, until the user edits again or discards
///   it); a `version_conflict` goes to the `ConflictPolicy`.
/// - `watch()` is the replayer's run loop: a pass whenever the path monitor reports a usable
///   path after another status, a write asks for one, or a `ReplayBackoff` wait after a transient
///   failure ends. Nothing replays outside it or `replay()`.
/// - `states()` publishes connectivity, activity, the outbox and the last error.
///
/// It logs to its client's logger (`APIClient.options.logger`: each refresh at `debug`, with
/// `courier.collection`) and records in its client's metrics (`courier_outbox_depth` and
/// `courier_outbox_oldest_pending_timestamp_seconds` after writes and passes; decision 2203);
/// the replayer it makes logs and times each pass, its run loop's too, and records each
/// delivery's lag there as well (decision 2301).
public actor SyncEngine<Record: CollectionRecord> {
  /// The engine's settings.
  public struct Configuration: Sendable {
    /// How version conflicts are settled.
    package var conflictPolicy: ConflictPolicy
    /// The collection's path on the server (`/articles`); empty for the declared one (an
    /// engine's own `configuration` always holds the path it uses).
    package var path: String
    /// How many times one operation is re-sent after last-write-wins conflicts in one replay
    /// before it is kept conflicted for the user (the server record keeps changing).
    package var maxResendsPerReplay: Int
    /// The wait before `watch()` replays again after a replay a transient failure stopped
    /// (used by the engine's own replayer; a shared replayer has its own).
    package var replayBackoff: ReplayBackoff
    /// Settles the fields both sides changed under `ConflictPolicy.merge` (the collection's
    /// resolver); nil for last write wins per field.
    package var mergeResolver: FieldResolver?

    /// Creates settings.
    /// - Parameters:
    ///   - conflictPolicy: the conflict policy.
    ///   - path: the collection's path; the declared one (`/<collection>`) by default.
    ///   - maxResendsPerReplay: the re-send bound.
    public init(
      conflictPolicy: ConflictPolicy = .lastWriteWins, path: String? = nil,
      maxResendsPerReplay: Int = 3
    ) {
      self.init(
        conflictPolicy: conflictPolicy, path: path, maxResendsPerReplay: maxResendsPerReplay,
        replayBackoff: ReplayBackoff())
    }

    /// Creates settings with the wait between replays after transient failures, while
    /// watching (Courier's own tuning and tests).
    package init(
      conflictPolicy: ConflictPolicy = .lastWriteWins, path: String? = nil,
      maxResendsPerReplay: Int = 3, replayBackoff: ReplayBackoff
    ) {
      self.conflictPolicy = conflictPolicy
      self.path = path ?? ""
      self.maxResendsPerReplay = maxResendsPerReplay
      self.replayBackoff = replayBackoff
    }
  }

  /// The settings, with the path the engine uses.
  package nonisolated let configuration: Configuration
  /// The collection this engine keeps: its declaration, with the configured path.
  package nonisolated let collection: CollectionDescription
  /// The store's replayer: sends the outbox of every collection of the store (shared by the
  /// engines of one store), and runs the loop `watch()` runs.
  package nonisolated let replayer: OutboxReplayer
  private let client: APIClient
  private let store: any LocalStore
  private let reader: CollectionReader
  private let now: @Sendable () -> Date

  /// Creates an engine with a replayer of its own for `store`.
  /// - Parameters:
  ///   - client: the request pipeline (with its retry policy).
  ///   - store: the local store (records and outbox).
  ///   - collection: the collection's declaration.
  ///   - pathMonitor: the path monitor, for the online state and `watch()`; nil when none.
  ///   - configuration: the settings.
  ///   - now: the wall clock (edit times, refresh times, ages).
  ///   - clock: the clock `watch()` waits on between replays after transient failures.
  ///   - random: the jitter source of those waits.
  public init(
    client: APIClient, store: any LocalStore, collection: CollectionDescription,
    pathMonitor: (any PathMonitor)? = nil, configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    random: any RandomSource = SystemRandomSource()
  ) {
    let replayer = OutboxReplayer(
      store: store, pathMonitor: pathMonitor,
      configuration: OutboxReplayer.Configuration(replayBackoff: configuration.replayBackoff),
      now: now, clock: clock, random: random, logger: client.options.logger,
      metrics: client.metrics)
    self.init(
      replayer: replayer, client: client, collection: collection, configuration: configuration,
      now: now)
  }

  /// Creates an engine for one collection of a store whose replayer is shared (one replayer
  /// per local store sends every collection's entries in outbox order): registers the
  /// collection's route (the default `RecordSender`, this engine's conflict settings) on it.
  /// - Parameters:
  ///   - replayer: the store's replayer.
  ///   - client: the request pipeline.
  ///   - collection: the collection's declaration.
  ///   - configuration: the settings (`replayBackoff` is the replayer's own).
  ///   - now: the wall clock (edit times, refresh times, ages).
  package init(
    replayer: OutboxReplayer, client: APIClient, collection: CollectionDescription,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.init(
      replayer: replayer, client: client, collection: collection, configuration: configuration,
      now: now, registersRoute: true)
  }

  /// Creates an engine over a shared replayer; `registersRoute` false leaves the replayer's
  /// routes alone, for a composition root that registers every collection's once.
  package init(
    replayer: OutboxReplayer, client: APIClient, collection: CollectionDescription,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() }, registersRoute: Bool
  ) {
    var collection = collection
    var configuration = configuration
    if configuration.path.isEmpty {
      configuration.path = collection.path
    } else {
      collection.path = configuration.path
    }
    self.collection = collection
    self.configuration = configuration
    self.replayer = replayer
    self.client = client
    self.store = replayer.store
    self.now = now
    reader = CollectionReader(
      client: client, store: replayer.store, collection: collection, now: now)
    guard registersRoute else { return }
    replayer.register(
      .records(
        collection, client: client,
        decision: ReplayDecision(
          policy: configuration.conflictPolicy, collection: collection,
          maxResends: configuration.maxResendsPerReplay, resolver: configuration.mergeResolver)))
  }

  // MARK: - State

  /// A stream of states: the current one first, then every change (`bufferingNewest(1)`).
  /// - Returns: the stream.
  public nonisolated func states() -> AsyncStream<SyncState> { replayer.states() }

  /// The current state.
  package nonisolated var state: SyncState { replayer.state }

  /// Reloads the outbox part of the state from the store.
  package func reloadState() { replayer.reloadState() }

  // MARK: - Reads

  /// The stored records, at once, with their age.
  /// - Returns: a `cache` snapshot.
  /// - Throws: `StoreError` when the store cannot be read.
  package func cached() throws -> SyncSnapshot<Record> {
    try reader.snapshot(Record.self, source: .cache)
  }

  /// Refreshes from the server with `If-None-Match`: a 200 replaces the stored list (local
  /// pending changes are kept), a 304 keeps it, a failure keeps it and says why.
  /// - Returns: a `network` snapshot; `error` set when the refresh failed.
  package func refresh() async -> SyncSnapshot<Record> {
    replayer.noteRefresh(started: true)
    var notModified = false
    var failure: CourierError?
    do {
      notModified = try await reader.revalidate()
    } catch {
      failure = OutboxReplayer.courierError(error, context: "refreshing \(collection.path)")
    }
    replayer.noteRefresh(started: false, failure: failure)
    let logger = client.options.logger
    if logger.logs(.debug) {
      var metadata: Logger.Metadata = [
        CourierLogKey.collection: "\(LogText.escaped(collection.name))"
      ]
      if let failure { metadata[CourierLogKey.errorKind] = "\(failure.kind.rawValue)" }
      logger.debug(
        failure != nil
          ? "Refresh failed; the cached records are kept"
          : notModified ? "Refresh: not modified" : "Refresh: records replaced",
        metadata: metadata)
    }
    do {
      var result = try reader.snapshot(Record.self, source: .network)
      result.notModified = notModified
      result.error = failure
      return result
    } catch {
      let storeFailure = OutboxReplayer.courierError(error, context: "reading the local store")
      return SyncSnapshot(
        source: .network, items: [], lastRefresh: nil, age: nil, error: failure ?? storeFailure)
    }
  }

  /// The cached snapshot at once, then the refreshed one: stale-while-revalidate as a stream.
  /// A failed refresh keeps the cache and says why in the second snapshot (`error`).
  /// - Returns: a stream of two snapshots; it throws the `CourierError` of a store that
  ///   cannot be read.
  public nonisolated func list() -> AsyncThrowingStream<SyncSnapshot<Record>, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          continuation.yield(try await self.cached())
          continuation.yield(await self.refresh())
          continuation.finish()
        } catch {
          continuation.finish(throwing: CourierError.wrapping(error))
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  // MARK: - Writes

  /// Creates a record locally and queues it (the id is the client's, a UUID for articles).
  /// - Parameter record: the record.
  /// - Returns: what was written and queued.
  /// - Throws: `CourierError.invalidInput` when its fields do not fit the collection's
  ///   declaration; `StoreError` when the store cannot write it (nothing changed then).
  @discardableResult
  public func create(_ record: Record) throws -> WriteReceipt {
    let (change, operation) = try Self.creation(of: record, in: collection, at: now())
    return try write(change, operation)
  }

  /// Replaces a record's fields locally and queues the update, based on the server version
  /// the local copy holds (or as a create when the server never confirmed it).
  /// - Parameter record: the record with its new fields.
  /// - Returns: what was written and queued.
  /// - Throws: `StoreError` (`notFound` when no such record is stored, or it is deleted);
  ///   `CourierError.invalidInput` when its fields do not fit the collection's declaration.
  @discardableResult
  public func update(_ record: Record) throws -> WriteReceipt {
    let key = RecordKey(collection: collection.name, id: record.id)
    guard let existing = try store.record(key), !existing.isDeleted else {
      throw StoreError(.notFound, "No \(collection.name) record has id \(record.id).")
    }
    try collection.validate(record.payload)
    let kind: OutboxKind = existing.server == nil ? .create : .update
    let operation = OutboxOperation(
      key: key, kind: kind, payload: record.payload, baseVersion: existing.version,
      enqueuedAt: now())
    return try write(.put(key, payload: record.payload), operation)
  }

  /// Deletes a record locally (a tombstone until the server confirms) and queues the delete.
  /// - Parameter id: the record's id.
  /// - Returns: what was written and queued.
  /// - Throws: `StoreError` (`notFound` when no such record is stored, or already deleted).
  @discardableResult
  public func delete(id: String) throws -> WriteReceipt {
    let key = RecordKey(collection: collection.name, id: id)
    guard let existing = try store.record(key), !existing.isDeleted else {
      throw StoreError(.notFound, "No \(collection.name) record has id \(id).")
    }
    let operation = OutboxOperation(
      key: key, kind: .delete, payload: nil, baseVersion: existing.version, enqueuedAt: now())
    return try write(.delete(key), operation)
  }

  /// Drops every local change to a record (rejected or conflicted ones included) and shows
  /// the server's copy again.
  /// - Parameter id: the record's id.
  /// - Returns: the record after (nil when the server never had it).
  /// - Throws: `StoreError` when it cannot be written.
  @discardableResult
  package func discard(id: String) throws -> LocalRecord? {
    let after = try store.revert(RecordKey(collection: collection.name, id: id))
    replayer.reloadState()
    client.metrics.outbox(of: store)
    return after
  }

  /// Settles a conflict kept for the user (manual policy).
  /// - Parameters:
  ///   - operationID: the conflicted entry's operation id.
  ///   - keepLocal: true to send the local write again on top of the server's version; false
  ///     to take the server's record and drop the local changes to that record.
  /// - Throws: `StoreError.notFound` when no such entry is conflicted.
  package func resolveConflict(operationID: UUID, keepLocal: Bool) throws {
    try replayer.resolveConflict(operationID: operationID, keepLocal: keepLocal)
    client.metrics.outbox(of: store)
  }

  private func write(_ change: RecordChange, _ operation: OutboxOperation) throws -> WriteReceipt {
    let receipt = try Self.commit(change, operation, to: store)
    replayer.noteWrite(receipt.enqueue)
    let pending = replayer.state.pendingCount
    // A write adds the newest entry: it is the oldest waiting only when it waits alone.
    client.metrics.outbox(
      pending: pending, oldestCommittedAt: pending == 1 ? operation.enqueuedAt : nil)
    replayer.requestReplay()
    return receipt
  }

  // MARK: - Replay

  /// Asks the store's run loop for a pass (after a write, or when the path comes back): a pass
  /// already running picks new entries up, and another runs if asked meanwhile. Does nothing
  /// when no `watch()` runs or the path is known to be down.
  package func scheduleReplay() { replayer.requestReplay() }

  /// Sends the store's outbox in queue order until it is empty or a transient failure stops it,
  /// in the caller's task. A replay already running is waited for first, so two never
  /// interleave.
  /// - Returns: what this replay did.
  public func replay() async -> ReplayReport {
    // The replayer logs and times the pass itself (decision 2301).
    let report = await replayer.replay()
    client.metrics.outbox(of: store)
    return report
  }

  /// Waits until no replay runs (for tests and a CLI about to exit).
  package func waitForIdle() async { await replayer.waitForIdle() }

  /// The `Idempotency-Key` of one send: the operation id, plus the base version when there is
  /// one (`ReplayRequest.idempotencyKey(for:)`).
  /// - Parameter operation: the operation.
  /// - Returns: the key.
  package static func idempotencyKey(for operation: OutboxOperation) -> String {
    ReplayRequest.idempotencyKey(for: operation)
  }

  /// The request that sends an operation, as `ReplayRequest` describes it (without the
  /// `Content-Type` its body adds).
  /// - Parameter operation: the operation.
  /// - Returns: the method, path, header fields and JSON body.
  package nonisolated func requestParts(for operation: OutboxOperation) -> (
    method: HTTPRequest.Method, path: String, headerFields: HTTPFields, json: JSONValue?
  ) {
    let described = ReplayRequest(operation, collection: collection)
    var fields = described.headerFields
    fields[.contentType] = nil
    return (described.method, described.path, fields, described.json)
  }

  // MARK: - Connectivity

  /// The store's run loop until cancelled (`OutboxReplayer.run`): publishes online and
  /// offline and replays whenever the path becomes usable after another status or a write asks;
  /// a replay stopped by a transient failure (whoever started it) is followed by another after a
  /// `ReplayBackoff` wait on the replayer's clock: equal jitter, growing with each consecutive
  /// failed replay, `Retry-After` as a floor; a replay that ends otherwise, or a path change,
  /// resets it, and no retry waits while the path is known to be down (its return replays at
  /// once). Cancelling it ends it, its retries and the replay it runs at once. Does not run the
  /// monitor itself (the caller runs `pathMonitor.run()` beside it).
  public func watch() async { await watch(replayingFirst: false) }

  /// ``watch()``, sending the outbox once as it starts.
  /// - Parameter replayingFirst: whether to send the outbox once as it starts (unless the path
  ///   is known to be down), after it counts as watching: a write made at any moment is then
  ///   either in that replay or schedules its own, with no window between the two.
  package func watch(replayingFirst: Bool) async {
    let observation = ReplayObservation(metrics: client.metrics, store: store)
    guard observation.isEnabled else { return await replayer.run(replayingFirst: replayingFirst) }
    // The outbox gauges follow the states the run loop publishes (its passes are its own).
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await self.replayer.run(replayingFirst: replayingFirst) }
      group.addTask { await observation.follow(self.replayer.states()) }
      await group.next()
      group.cancelAll()
    }
  }
}

extension SyncEngine where Record: SyncRecord {
  /// Creates an engine for the record type's declared collection (`Record.declaration`), with a
  /// replayer of its own for `store`.
  /// - Parameters:
  ///   - client: the request pipeline (with its retry policy).
  ///   - store: the local store (records and outbox).
  ///   - pathMonitor: the path monitor, for the online state and `watch()`; nil when none.
  ///   - configuration: the settings.
  ///   - now: the wall clock (edit times, refresh times, ages).
  ///   - clock: the clock `watch()` waits on between replays after transient failures.
  ///   - random: the jitter source of those waits.
  package init(
    client: APIClient, store: any LocalStore, pathMonitor: (any PathMonitor)? = nil,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    random: any RandomSource = SystemRandomSource()
  ) {
    self.init(
      client: client, store: store, collection: Record.declaration, pathMonitor: pathMonitor,
      configuration: configuration, now: now, clock: clock, random: random)
  }
}

// MARK: - Retrying and discarding outbox entries

extension SyncEngine {
  /// Puts a refused, conflicted or parked entry back in the queue, to be sent by the next replay
  /// (`OutboxReplayer.retryEntry`: a new operation id, hence a new `Idempotency-Key`; a
  /// conflicted entry is rebased on the server's version it was shown; a parked one keeps its
  /// key, decision 2401).
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry now pending (with its new operation id, unless it was parked).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  package func retryEntry(operationID: UUID) throws -> OutboxEntry {
    let entry = try replayer.retryEntry(operationID: operationID)
    client.metrics.outbox(of: store)
    return entry
  }

  /// Puts every refused, conflicted and parked entry back in the queue (see `retryEntry`).
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written (the entries before the failure
  ///   are requeued, the others are kept as they were).
  @discardableResult
  package func retryAllEntries() throws -> [OutboxEntry] {
    let entries = try replayer.retryAllEntries()
    client.metrics.outbox(of: store)
    return entries
  }

  /// Drops an outbox entry with every local change to its record (the entry's and any later
  /// ones: they were made on top of it), and shows the server's copy again, as `discard(id:)`.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  package func discardEntry(operationID: UUID) throws -> (entry: OutboxEntry, record: LocalRecord?)
  {
    let discarded = try replayer.discardEntry(operationID: operationID)
    client.metrics.outbox(of: store)
    return discarded
  }
}
