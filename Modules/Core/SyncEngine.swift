import CourierDomain
import CourierPorts
import Foundation

/// Keeps one collection of records (articles) in sync between a local store and the server.
///
/// - Reads are stale-while-revalidate: `cached()` shows the stored records at once with their
///   age; `refresh()` asks the server with `If-None-Match` and keeps the stored records on a
///   304 or a failure (nothing is wiped by a network error).
/// - Writes (`create`, `update`, `delete`) are applied optimistically and enqueued in one
///   transaction, then a replay is scheduled.
/// - `replay()` sends the outbox strictly in queue order (global FIFO). A transient failure
///   stops it and keeps everything; a business refusal marks the entry rejected (the local
///   change stays visible, flagged, until the user edits again or discards it); a
///   `version_conflict` goes to the `ConflictPolicy`.
/// - `watch()` replays whenever the path monitor reports a usable path after another status,
///   and, while it runs, again after a `ReplayBackoff` wait when a replay was stopped by a
///   transient failure (the server answered 503, timed out, could not be reached).
/// - `states()` publishes connectivity, activity, the outbox and the last error.
public actor SyncEngine<Record: SyncRecord> {
  /// The engine's settings.
  public struct Configuration: Sendable {
    /// How version conflicts are settled.
    public var conflictPolicy: ConflictPolicy
    /// The collection's path on the server (`/articles`).
    public var path: String
    /// Whether a write schedules a replay by itself even when no `watch()` runs (off for a
    /// caller that replays itself; while a `watch()` runs, writes always schedule one).
    public var replaysAfterWrites: Bool
    /// How many times one operation is re-sent after last-write-wins conflicts in one replay
    /// before it is kept conflicted for the user (the server record keeps changing).
    public var maxResendsPerReplay: Int
    /// The wait before `watch()` replays again after a replay a transient failure stopped.
    public var replayBackoff: ReplayBackoff
    /// Settles the fields both sides changed under `ConflictPolicy.merge` (the collection's
    /// resolver); nil for last write wins per field.
    public var mergeResolver: FieldResolver?
    // ISSUE-13 HOOK (1/2): senders of collections whose entries are not JSON records.
    /// The senders of collections whose entries are not records of this engine's collection,
    /// by collection name (the queued uploads' `QueuedUploadSender` under `uploads`): their
    /// entries are sent by them, in outbox order with the others.
    public var senders: [String: any ReplaySender] = [:]

    /// Creates settings.
    /// - Parameters:
    ///   - conflictPolicy: the conflict policy.
    ///   - path: the collection's path; `/<collection>` by default.
    ///   - replaysAfterWrites: whether writes schedule a replay.
    ///   - maxResendsPerReplay: the re-send bound.
    ///   - replayBackoff: the wait between replays after transient failures, while watching.
    public init(
      conflictPolicy: ConflictPolicy = .lastWriteWins, path: String? = nil,
      replaysAfterWrites: Bool = true, maxResendsPerReplay: Int = 3,
      replayBackoff: ReplayBackoff = ReplayBackoff()
    ) {
      self.conflictPolicy = conflictPolicy
      self.path = path ?? "/\(Record.collection)"
      self.replaysAfterWrites = replaysAfterWrites
      self.maxResendsPerReplay = maxResendsPerReplay
      self.replayBackoff = replayBackoff
    }
  }

  /// The settings.
  public nonisolated let configuration: Configuration
  private let client: APIClient
  private let store: any LocalStore
  private let pathMonitor: (any PathMonitor)?
  private let now: @Sendable () -> Date
  private let publisher: SyncStatePublisher
  private var replayTask: Task<ReplayReport, Never>?
  private var replayRequested = false
  private var refreshing = false
  // Retries after transient failures (`watch()`): waits are made on `clock`, jittered by
  // `random`; `failedReplays` counts consecutive replays a transient failure stopped.
  private let clock: any Clock<Duration>
  private let random: any RandomSource
  private var watchers = 0
  private var failedReplays = 0
  private var lastTransientStop: CourierError?
  private var retryTask: Task<Void, Never>?
  private var retrySleeping = false

  /// Creates an engine.
  /// - Parameters:
  ///   - client: the request pipeline (with its retry policy).
  ///   - store: the local store (records and outbox).
  ///   - pathMonitor: the path monitor, for the online state and `watch()`; nil when none.
  ///   - configuration: the settings.
  ///   - now: the wall clock (edit times, refresh times, ages).
  ///   - clock: the clock `watch()` waits on between replays after transient failures.
  ///   - random: the jitter source of those waits.
  public init(
    client: APIClient, store: any LocalStore, pathMonitor: (any PathMonitor)? = nil,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    random: any RandomSource = SystemRandomSource()
  ) {
    self.clock = clock
    self.random = random
    self.client = client
    self.store = store
    self.pathMonitor = pathMonitor
    self.configuration = configuration
    self.now = now
    var initial = SyncState(path: pathMonitor?.currentPath.status ?? .unknown)
    if let entries = try? store.entries() { Self.count(entries, into: &initial) }
    publisher = SyncStatePublisher(initial)
  }

  // MARK: - State

  /// A stream of states: the current one first, then every change (`bufferingNewest(1)`).
  /// - Returns: the stream.
  public nonisolated func states() -> AsyncStream<SyncState> { publisher.updates() }

  /// The current state.
  public nonisolated var state: SyncState { publisher.current }

  /// Reloads the outbox part of the state from the store.
  public func reloadState() {
    guard let entries = try? store.entries() else { return }
    publisher.update { Self.count(entries, into: &$0) }
  }

  private static func count(_ entries: [OutboxEntry], into state: inout SyncState) {
    state.pendingCount = entries.filter { $0.state.isPending }.count
    state.rejected = entries.filter {
      if case .rejected = $0.state { return true }
      return false
    }
    state.conflicted = entries.filter {
      if case .conflicted = $0.state { return true }
      return false
    }
  }

  // MARK: - Reads

  /// The stored records, at once, with their age.
  /// - Returns: a `cache` snapshot.
  /// - Throws: `StoreError` when the store cannot be read.
  public func cached() throws -> SyncSnapshot<Record> {
    try snapshot(source: .cache)
  }

  /// Refreshes from the server with `If-None-Match`: a 200 replaces the stored list (local
  /// pending changes are kept), a 304 keeps it, a failure keeps it and says why.
  /// - Returns: a `network` snapshot; `error` set when the refresh failed.
  public func refresh() async -> SyncSnapshot<Record> {
    refreshing = true
    publishSyncing()
    defer {
      refreshing = false
      publishSyncing()
    }
    var notModified = false
    var failure: CourierError?
    do {
      let state = try store.collectionState(Record.collection)
      var headers: HTTPHeaders = [:]
      if let etag = state.etag { headers["If-None-Match"] = etag }
      let response = try await client.send(
        try client.request(.get, configuration.path, headers: headers))
      if response.status == 304 {
        notModified = true
        try store.markNotModified(collection: Record.collection, refreshedAt: now())
      } else {
        let records = try Self.parseList(response.body)
        try store.applyServerList(
          records, collection: Record.collection, etag: response.headers["ETag"],
          refreshedAt: now())
      }
      publisher.update {
        $0.lastError = nil
        $0.lastSyncAt = now()
      }
    } catch {
      failure = Self.courierError(error, context: "refreshing \(configuration.path)")
      publisher.update { $0.lastError = failure }
    }
    do {
      var result = try snapshot(source: .network)
      result.notModified = notModified
      result.error = failure
      return result
    } catch {
      let storeFailure = Self.courierError(error, context: "reading the local store")
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

  private func snapshot(source: SyncSnapshot<Record>.Source) throws -> SyncSnapshot<Record> {
    let records = try store.records(in: Record.collection)
    let state = try store.collectionState(Record.collection)
    var items: [SyncItem<Record>] = []
    var deleted: [String] = []
    var unreadable: [String] = []
    for record in records {
      if record.isDeleted {
        deleted.append(record.key.id)
        continue
      }
      if let value = try? Record(record: record) {
        items.append(SyncItem(value: value, state: record.state))
      } else {
        unreadable.append(record.key.id)
      }
    }
    let age = state.lastRefresh.map { max(0, now().timeIntervalSince($0)) }
    return SyncSnapshot(
      source: source, items: items, deletedIDs: deleted, unreadable: unreadable,
      lastRefresh: state.lastRefresh, age: age)
  }

  private static func parseList(_ body: Data) throws -> [ServerRecord] {
    let json: JSONValue
    do {
      json = try JSONValue(parsing: body)
    } catch {
      // A list that is not JSON at all is a page from something else on the network (a Wi-Fi
      // login page answering every request): the stored list is kept, as for any failure.
      throw CourierError(
        .notTheServer, code: "list_not_json", underlying: String(describing: error),
        context: "the \(Record.collection) list")
    }
    guard case .array(let elements) = json else {
      throw CourierError(
        .decoding, code: "list_not_array", context: "the \(Record.collection) list")
    }
    return try elements.map { try Record.schema.serverRecord(from: $0) }
  }

  // MARK: - Writes

  /// Creates a record locally and queues it (the id is the client's, a UUID for articles).
  /// - Parameter record: the record.
  /// - Returns: what was written and queued.
  /// - Throws: `StoreError` when the store cannot write it (nothing changed then).
  @discardableResult
  public func create(_ record: Record) throws -> WriteReceipt {
    let key = RecordKey(collection: Record.collection, id: record.id)
    let operation = OutboxOperation(
      key: key, kind: .create, payload: record.payload, baseVersion: nil, enqueuedAt: now())
    return try write(.put(key, payload: record.payload), operation)
  }

  /// Replaces a record's fields locally and queues the update, based on the server version
  /// the local copy holds (or as a create when the server never confirmed it).
  /// - Parameter record: the record with its new fields.
  /// - Returns: what was written and queued.
  /// - Throws: `StoreError` (`notFound` when no such record is stored, or it is deleted).
  @discardableResult
  public func update(_ record: Record) throws -> WriteReceipt {
    let key = RecordKey(collection: Record.collection, id: record.id)
    guard let existing = try store.record(key), !existing.isDeleted else {
      throw StoreError(.notFound, "No \(Record.collection) record has id \(record.id).")
    }
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
    let key = RecordKey(collection: Record.collection, id: id)
    guard let existing = try store.record(key), !existing.isDeleted else {
      throw StoreError(.notFound, "No \(Record.collection) record has id \(id).")
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
  public func discard(id: String) throws -> LocalRecord? {
    let after = try store.revert(RecordKey(collection: Record.collection, id: id))
    reloadState()
    return after
  }

  /// Settles a conflict kept for the user (manual policy).
  /// - Parameters:
  ///   - operationID: the conflicted entry's operation id.
  ///   - keepLocal: true to send the local write again on top of the server's version; false
  ///     to take the server's record and drop the local changes to that record.
  /// - Throws: `StoreError.notFound` when no such entry is conflicted.
  public func resolveConflict(operationID: UUID, keepLocal: Bool) throws {
    guard let entry = try store.entry(operationID),
      case .conflicted(let json) = entry.state
    else {
      throw StoreError(.notFound, "No conflicted outbox entry has operation id \(operationID).")
    }
    let server = try? Record.schema.serverRecord(from: json)
    if keepLocal {
      try store.markPending(operationID, baseVersion: server?.version)
    } else {
      try store.revert(entry.key)
      if let server { try store.applyServerRecord(server, key: entry.key) }
    }
    reloadState()
    if keepLocal { scheduleReplay() }
  }

  private func write(_ change: RecordChange, _ operation: OutboxOperation) throws -> WriteReceipt {
    let result = try store.applyAndEnqueue(change, operation)
    let record = try store.record(change.key)
    publisher.update { state in
      switch result {
      case .appended: state.pendingCount += 1
      case .coalesced: break
      case .cancelled: state.pendingCount = max(0, state.pendingCount - 1)
      }
    }
    scheduleReplay()
    return WriteReceipt(
      key: change.key, operationID: result.entry?.id, enqueue: result, record: record)
  }

  // MARK: - Replay

  /// Schedules a replay in the background (after a write, or when the path comes back); a
  /// replay already running picks new entries up, and runs again if asked meanwhile.
  /// Does nothing when writes do not replay by themselves (`replaysAfterWrites` off and no
  /// `watch()` running) or the path is known to be down.
  public func scheduleReplay() {
    // The monitor's own current path, not the state `watch()` has caught up with: a write
    // made just after the interface showed "offline" must not be sent.
    let path = pathMonitor?.currentPath.status ?? state.path
    guard configuration.replaysAfterWrites || watchers > 0, path == .satisfied || path == .unknown
    else { return }
    if replayTask != nil {
      replayRequested = true
      return
    }
    Task { _ = await self.replay() }
  }

  /// Sends the outbox in queue order until it is empty or a transient failure stops it. A
  /// replay already running is waited for first, so two never interleave.
  /// - Returns: what this replay did.
  public func replay() async -> ReplayReport {
    await waitForIdle()
    let task = Task { await self.drain() }
    replayTask = task
    replayRequested = false
    publishSyncing()
    // Cancelling the caller (a watch ending on SIGTERM) stops the replay between requests or
    // in the send itself; an interrupted entry stays pending with its attempt counted.
    let report = await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      task.cancel()
    }
    if replayTask == task { replayTask = nil }
    publishSyncing()
    noteReplayOutcome(report)
    if replayRequested {
      replayRequested = false
      scheduleReplay()
    }
    return report
  }

  /// Waits until no replay runs (for tests and a CLI about to exit).
  public func waitForIdle() async {
    // A finished task is cleared here too: its owner may not have resumed yet, and awaiting a
    // finished task does not suspend, so looping on it would spin on the actor.
    while let running = replayTask {
      _ = await running.value
      if replayTask == running { replayTask = nil }
    }
  }

  private func publishSyncing() {
    let busy = replayTask != nil || refreshing
    publisher.update { $0.isSyncing = busy }
  }

  private enum Step {
    case next
    /// The entry was kept conflicted: later entries of its record wait.
    case held
    case reread
    case stop(CourierError)
  }

  private func drain() async -> ReplayReport {
    var report = ReplayReport()
    var resends: [UUID: Int] = [:]
    var outcome: CourierError?
    batches: while true {
      let batch: [OutboxEntry]
      do {
        batch = try store.entries()
      } catch {
        outcome = Self.courierError(error, context: "reading the outbox")
        break
      }
      var queue = ReplayQueue(batch)
      var didWork = false
      while let (entry, superseded) = queue.next() {
        if Task.isCancelled {
          outcome = CourierError(.cancelled, context: "replay")
          break batches
        }
        // A newer write of a record supersedes its earlier refused ones.
        for id in superseded {
          try? store.remove(id)
        }
        let step = await send(entry, report: &report, resends: &resends)
        switch step {
        case .next:
          didWork = true
        case .held:
          didWork = true
          queue.hold(entry.key)
        case .reread:
          didWork = true
          continue batches
        case .stop(let error):
          outcome = error
          break batches
        }
      }
      if !didWork { break }
    }
    report.stoppedBy = outcome
    let entries = (try? store.entries()) ?? []
    report.pending = entries.filter { $0.state.isPending }.count
    let finished = now()
    publisher.update { state in
      Self.count(entries, into: &state)
      if let outcome {
        state.lastError = outcome
      } else {
        state.lastError = nil
        state.lastSyncAt = finished
      }
    }
    return report
  }

  /// The `Idempotency-Key` of one send: the operation id, plus the base version when there is
  /// one (`ReplayRequest.idempotencyKey(for:)`).
  /// - Parameter operation: the operation.
  /// - Returns: the key.
  public static func idempotencyKey(for operation: OutboxOperation) -> String {
    ReplayRequest.idempotencyKey(for: operation)
  }

  /// The request that sends an operation, as `ReplayRequest` describes it (without the
  /// `Content-Type` its body adds).
  /// - Parameter operation: the operation.
  /// - Returns: the method, path, headers and JSON body.
  public nonisolated func requestParts(for operation: OutboxOperation) -> (
    method: HTTPMethod, path: String, headers: HTTPHeaders, json: JSONValue?
  ) {
    let described = ReplayRequest(operation, collection: collection)
    var headers = described.headers
    headers["Content-Type"] = nil
    return (described.method, described.path, headers, described.json)
  }

  /// The collection as the replay addresses it.
  private nonisolated var collection: CollectionDescription {
    CollectionDescription(name: Record.collection, path: configuration.path, schema: Record.schema)
  }

  private func send(
    _ queued: OutboxEntry, report: inout ReplayReport, resends: inout [UUID: Int]
  ) async -> Step {
    let entry: OutboxEntry
    do {
      entry = try store.recordAttempt(queued.id)
    } catch let error as StoreError where error.code == .notFound {
      return .reread
    } catch {
      return .stop(Self.courierError(error, context: "counting a send attempt"))
    }
    let operation = entry.operation
    // ISSUE-13 HOOK (2/2): an entry whose collection has a sender of its own goes through it.
    if let sender = configuration.senders[entry.key.collection] {
      let answer = await sender.send(entry, progress: nil)
      return carryOut(entry, answer: answer, report: &report, resends: &resends)
    }
    do {
      let described = ReplayRequest(operation, collection: collection)
      let request = try client.request(
        described.method, described.path, headers: described.headers)
      let body = try described.body().map { RequestBody.bytes($0) }
      let response = try await client.send(request, body: body)
      // Only a reply that proves the intended server applied the write completes it; a login
      // page or any other 2xx throws `notTheServer` and the entry stays pending (decision 0414).
      let server = try DeliveryProof.write(operation, response: response, schema: Record.schema)
      return carryOut(entry, answer: .delivered(server), report: &report, resends: &resends)
    } catch let error as CourierError {
      return carryOut(entry, answer: .failed(error), report: &report, resends: &resends)
    } catch {
      return .stop(Self.courierError(error, context: "sending \(operation.key)"))
    }
  }

  /// Carries out what `ReplayDecision` decided for an entry: the store calls, the report and
  /// the published state. Every rule is in the decision; this only executes it.
  private func carryOut(
    _ entry: OutboxEntry, answer: ReplayAnswer, report: inout ReplayReport,
    resends: inout [UUID: Int]
  ) -> Step {
    let decision = ReplayDecision(
      policy: configuration.conflictPolicy, schema: Record.schema,
      maxResends: configuration.maxResendsPerReplay, resolver: configuration.mergeResolver)
    // The merge needs the copy the write started from: the record's server copy (only read
    // for a conflict, so a plain replay costs no extra read).
    var base: ServerRecord?
    if configuration.conflictPolicy == .merge, case .failed(let error) = answer,
      error.kind == .conflict
    {
      base = (try? store.record(entry.key))?.server
    }
    var step = decision.step(
      for: entry, answer: answer, resends: resends[entry.id, default: 0], base: base)
    do {
      if case .resendMerged(let payload, let server) = step {
        do {
          resends[entry.id, default: 0] += 1
          try store.rebase(entry.id, payload: payload, onto: server)
          report.conflictsMerged += 1
          return .reread
        } catch let error as StoreError where error.code == .unusable {
          // A store that cannot merge: keep the conflict for the user, nothing is dropped.
          let current = Record.schema.json(for: server)
          step = .keepConflict(current: current, adopting: server)
        }
      }
      switch step {
      case .complete(let server):
        try store.complete(entry.id, serverRecord: server)
        report.sent += 1
        if case .delivered = answer {
          publisher.update { $0.pendingCount = max(0, $0.pendingCount - 1) }
        }
        return .next
      case .resend(let base, let server):
        resends[entry.id, default: 0] += 1
        if let server { try store.applyServerRecord(server, key: entry.key) }
        try store.markPending(entry.id, baseVersion: base)
        report.conflictsResent += 1
        return .reread
      case .takeServer(let server):
        try store.revert(entry.key)
        if let server { try store.applyServerRecord(server, key: entry.key) }
        report.conflictsTakenFromServer += 1
        return .reread
      case .keepConflict(let current, let server):
        if let server { try store.applyServerRecord(server, key: entry.key) }
        let kept = try store.markConflicted(entry.id, serverRecord: current)
        report.conflictsKept += 1
        publisher.update {
          $0.pendingCount = max(0, $0.pendingCount - 1)
          $0.conflicted.append(kept)
        }
        return .held
      case .reject(let message, let code):
        let rejected = try store.markRejected(entry.id, message: message, code: code)
        report.rejected += 1
        let error: CourierError? =
          if case .failed(let error) = answer { error } else { nil }
        publisher.update {
          $0.pendingCount = max(0, $0.pendingCount - 1)
          $0.rejected.append(rejected)
          $0.lastError = error
        }
        return .next
      case .stop(let error):
        return .stop(error)
      case .resendMerged:
        return .reread  // carried out above
      }
    } catch {
      return .stop(
        Self.courierError(error, context: "recording the outcome of \(entry.operation.key)"))
    }
  }

  // MARK: - Connectivity

  /// Follows the path monitor until cancelled: publishes online/offline and replays whenever
  /// the path becomes usable after another status. While it runs, a replay stopped by a
  /// transient failure (whoever started it) is followed by another after a `ReplayBackoff`
  /// wait on the engine's clock: full jitter, growing with each consecutive failed replay,
  /// `Retry-After` as a floor; a replay that ends otherwise, or a path change, resets it, and
  /// no retry waits while the path is known to be down (its return replays at once).
  /// Cancelling it ends it and its retries at once. Does not run the monitor itself (the
  /// caller runs `pathMonitor.run()` beside it). Returns at once without a path monitor.
  public func watch() async { await watch(replayingFirst: false) }

  /// ``watch()``, sending the outbox once as it starts.
  /// - Parameter replayingFirst: whether to send the outbox once as it starts (unless the path
  ///   is known to be down), after it counts as watching: a write made at any moment is then
  ///   either in that replay or schedules its own, with no window between the two.
  public func watch(replayingFirst: Bool) async {
    guard let pathMonitor else {
      if replayingFirst { _ = await replay() }
      return
    }
    watchers += 1
    defer {
      watchers -= 1
      if watchers == 0 { cancelRetry(evenIfReplaying: true) }
    }
    // A replay that failed before the watch began (the first replay of `sync --watch`).
    if let stop = lastTransientStop, !retrySleeping, replayTask == nil, state.isOnline {
      scheduleRetry(after: stop)
    }
    let now = pathMonitor.currentPath.status
    if replayingFirst, now == .satisfied || now == .unknown { _ = await replay() }
    var previous: PathStatus?
    for await path in pathMonitor.updates() {
      if let previous, previous != path.status {
        failedReplays = 0
        cancelRetry(evenIfReplaying: false)
      }
      publisher.update { $0.path = path.status }
      defer { previous = path.status }
      guard path.status == .satisfied, let previous, previous != .satisfied else { continue }
      _ = await replay()
    }
  }

  /// Counts a finished replay for the retries of `watch()`: a transient stop with entries left
  /// schedules the next replay (while a watch runs and the path is not known to be down), any
  /// other end but a cancellation resets the count.
  private func noteReplayOutcome(_ report: ReplayReport) {
    guard let error = report.stoppedBy else {
      failedReplays = 0
      lastTransientStop = nil
      cancelRetry(evenIfReplaying: false)
      return
    }
    if error.kind == .cancelled { return }
    guard error.isTransient, report.pending > 0 else {
      failedReplays = 0
      lastTransientStop = nil
      cancelRetry(evenIfReplaying: false)
      return
    }
    failedReplays += 1
    lastTransientStop = error
    if watchers > 0 && state.isOnline { scheduleRetry(after: error) }
  }

  private func scheduleRetry(after error: CourierError) {
    cancelRetry(evenIfReplaying: false)
    let delay = configuration.replayBackoff.delay(
      afterFailures: max(1, failedReplays), retryAfter: error.retryAfter, jitter: random.next())
    let clock = self.clock
    retrySleeping = true
    retryTask = Task {
      do { try await clock.sleep(for: delay) } catch { return }
      await self.replayAfterBackoff()
    }
  }

  private func replayAfterBackoff() async {
    // Cancelled between the end of its wait and now: a path change or a replay took over.
    guard !Task.isCancelled, watchers > 0 else { return }
    retrySleeping = false
    _ = await replay()
  }

  /// Cancels the scheduled retry: only while it waits, or also the replay it runs.
  private func cancelRetry(evenIfReplaying: Bool) {
    guard retrySleeping || evenIfReplaying else { return }
    retryTask?.cancel()
    retryTask = nil
    retrySleeping = false
  }

  // MARK: - Errors

  private static func courierError(_ error: any Error, context: String) -> CourierError {
    if let error = error as? CourierError { return error }
    return CourierError.wrapping(error, context: context)
  }
}

// MARK: - Retrying and discarding outbox entries

extension SyncEngine {
  /// Puts a refused or conflicted entry back in the queue, to be sent by the next replay.
  ///
  /// The entry gets a new operation id, hence a new `Idempotency-Key` (decision 0412): the
  /// server stored its refusal (or its 409) under the old key and would answer the same again.
  /// A conflicted entry is also rebased on the server's version it was shown, as
  /// `resolveConflict(operationID:keepLocal: true)` does. The entry keeps its place in the
  /// queue (sequence number) and its attempt count. A pending entry is left as it is.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry now pending (with its new operation id).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  public func retryEntry(operationID: UUID) throws -> OutboxEntry {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let retried = try requeue(entry)
    reloadState()
    return retried
  }

  /// Puts every refused and conflicted entry back in the queue (see `retryEntry`).
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written (the entries before the failure
  ///   are requeued, the others are kept as they were).
  @discardableResult
  public func retryAllEntries() throws -> [OutboxEntry] {
    defer { reloadState() }
    return try store.entries().filter { !$0.state.isPending }.map { try requeue($0) }
  }

  /// Drops an outbox entry with every local change to its record (the entry's and any later
  /// ones: they were made on top of it), and shows the server's copy again, as `discard(id:)`.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  public func discardEntry(operationID: UUID) throws -> (entry: OutboxEntry, record: LocalRecord?) {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let after = try store.revert(entry.key)
    reloadState()
    return (entry, after)
  }

  private func requeue(_ entry: OutboxEntry) throws -> OutboxEntry {
    var base: Int?
    switch entry.state {
    case .pending:
      return entry
    case .rejected:
      break
    case .conflicted(let json):
      base = (try? Record.schema.serverRecord(from: json))?.version
    }
    return try store.requeue(entry.id, as: UUID(), baseVersion: base)
  }
}
