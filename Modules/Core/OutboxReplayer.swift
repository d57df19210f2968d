import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// Sends the outbox of one local store: the entries of every collection, in outbox order, each
/// through the `ReplaySender` of its collection's ``ReplayRoute``, and carries out what
/// `ReplayDecision` decides from the answer. It only executes decisions: which entry goes next is
/// `ReplayQueue`'s, what an answer means is `ReplayDecision`'s (decisions 0410, 0414, 1202).
///
/// - A pass (``replay()``) runs in the caller's task: cancelling the caller stops it, and an
///   interrupted entry stays pending with its attempt counted. Two passes never interleave.
/// - ``run(replayingFirst:)`` is the one run loop: while it runs, a write (``requestReplay()``),
///   the path coming back, and the end of a `ReplayBackoff` wait after a transient failure each
///   start a pass, inside the loop's task. Nothing is replayed in the background otherwise:
///   there is no task of its own to forget.
/// - Entries of a collection without a route wait (with their record's later entries) and are
///   counted in `ReplayReport.withoutSender`.
/// - `states()` publishes the store's outbox, connectivity and activity.
public actor OutboxReplayer {
  /// The replayer's settings.
  public struct Configuration: Sendable {
    /// The wait before the run loop replays again after a pass a transient failure stopped.
    public var replayBackoff: ReplayBackoff

    /// Creates settings.
    /// - Parameter replayBackoff: the wait between passes after transient failures.
    public init(replayBackoff: ReplayBackoff = ReplayBackoff()) {
      self.replayBackoff = replayBackoff
    }
  }

  /// The local store whose outbox it sends.
  public nonisolated let store: any LocalStore
  /// The settings.
  public nonisolated let configuration: Configuration
  private let pathMonitor: (any PathMonitor)?
  private let now: @Sendable () -> Date
  private let clock: any Clock<Duration>
  private let random: any RandomSource
  private let routes = Mutex<[String: ReplayRoute]>([:])
  private let publisher: SyncStatePublisher
  /// Passes and refreshes in progress, for `SyncState.isSyncing`.
  private let activity = Mutex((passes: 0, refreshes: 0))
  private let doorbell = Doorbell()

  // Passes: one at a time; `loop.requested` counts the run loop's requests (a write asks from
  // any thread, hence the lock), `served` those a started pass covers; `loop.watchers` counts
  // the `run()` calls active.
  private var passRunning = false
  private var passWaiters: [CheckedContinuation<Void, Never>] = []
  private let loop = Mutex((watchers: 0, requested: UInt64(0)))
  private var served: UInt64 = 0
  private var requested: UInt64 { loop.withLock { $0.requested } }
  private var watchers: Int { loop.withLock { $0.watchers } }
  // Retries after transient failures: `failedReplays` counts consecutive passes a transient
  // failure stopped; `retryDelay` is the armed wait; `retryDue` says it ended; the task sleeping
  // it is kept so a path change cancels that sleep at once.
  private var failedReplays = 0
  private var lastTransientStop: CourierError?
  private var retryDelay: Duration?
  private var retryDue = false
  private var retrySleeper: UnsafeCurrentTask?

  /// Creates a replayer for a store.
  /// - Parameters:
  ///   - store: the local store (records and outbox).
  ///   - pathMonitor: the path monitor the run loop follows; nil when none.
  ///   - configuration: the settings.
  ///   - now: the wall clock (the time of the last successful pass).
  ///   - clock: the clock the run loop waits on between passes after transient failures.
  ///   - random: the jitter source of those waits.
  public init(
    store: any LocalStore, pathMonitor: (any PathMonitor)? = nil,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    random: any RandomSource = SystemRandomSource()
  ) {
    self.store = store
    self.pathMonitor = pathMonitor
    self.configuration = configuration
    self.now = now
    self.clock = clock
    self.random = random
    var initial = SyncState(path: pathMonitor?.currentPath.status ?? .unknown)
    if let entries = try? store.entries() { Self.count(entries, into: &initial) }
    publisher = SyncStatePublisher(initial)
  }

  // MARK: - Routes

  /// Registers where a collection's entries go, replacing its earlier route. Takes effect from
  /// the next entry a pass sends.
  /// - Parameter route: the route.
  public nonisolated func register(_ route: ReplayRoute) {
    routes.withLock { $0[route.collection] = route }
  }

  /// The route of a collection.
  /// - Parameter collection: the collection's name in the local store.
  /// - Returns: its route, or nil when none is registered.
  public nonisolated func route(for collection: String) -> ReplayRoute? {
    routes.withLock { $0[collection] }
  }

  /// The collections with a route, sorted.
  public nonisolated var routedCollections: [String] { routes.withLock { $0.keys.sorted() } }

  // MARK: - State

  /// A stream of states: the current one first, then every change (`bufferingNewest(1)`).
  /// - Returns: the stream.
  public nonisolated func states() -> AsyncStream<SyncState> { publisher.updates() }

  /// The current state.
  public nonisolated var state: SyncState { publisher.current }

  /// Reloads the outbox part of the state from the store.
  public nonisolated func reloadState() {
    guard let entries = try? store.entries() else { return }
    publisher.update { Self.count(entries, into: &$0) }
  }

  /// Says that a reader started (`true`) or finished (`false`) a refresh, for `isSyncing`.
  /// - Parameters:
  ///   - started: whether it starts.
  ///   - failure: the refresh's failure when it finished (it becomes `lastError`); nil for a
  ///     success, which sets `lastSyncAt`.
  public nonisolated func noteRefresh(started: Bool, failure: CourierError? = nil) {
    activity.withLock { $0.refreshes += started ? 1 : -1 }
    let finished = now()
    publisher.update { state in
      if !started {
        state.lastError = failure
        if failure == nil { state.lastSyncAt = finished }
      }
    }
    publishSyncing()
  }

  private nonisolated func publishSyncing() {
    let busy = activity.withLock { $0.passes > 0 || $0.refreshes > 0 }
    publisher.update { $0.isSyncing = busy }
  }

  static func count(_ entries: [OutboxEntry], into state: inout SyncState) {
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

  /// Adjusts the published outbox after a write: one more entry, one fewer, or the same.
  /// - Parameter result: what the write did to the queue.
  public nonisolated func noteWrite(_ result: EnqueueResult) {
    publisher.update { state in
      switch result {
      case .appended: state.pendingCount += 1
      case .coalesced: break
      case .cancelled: state.pendingCount = max(0, state.pendingCount - 1)
      }
    }
  }

  // MARK: - Passes

  /// Asks the run loop for a pass (after a write, or when another process left writes in the
  /// store). Does nothing while no run loop runs or the path is known to be down: the path's
  /// return, or the next ``replay()``, sends them.
  public nonisolated func requestReplay() {
    // The monitor's own current path, not the state the loop has caught up with: a write made
    // just after the interface showed "offline" must not be sent.
    let path = pathMonitor?.currentPath.status ?? state.path
    guard path == .satisfied || path == .unknown else { return }
    let asked = loop.withLock { loop -> Bool in
      guard loop.watchers > 0 else { return false }
      loop.requested &+= 1
      return true
    }
    if asked { doorbell.ring() }
  }

  /// Sends the outbox once, in queue order, until it is empty or a failure that is not a refusal
  /// stops it; in the caller's task. A pass already running is waited for first, so two never
  /// interleave.
  /// - Returns: what this pass did.
  public func replay() async -> ReplayReport {
    while passRunning {
      await withCheckedContinuation { passWaiters.append($0) }
    }
    passRunning = true
    served = requested
    activity.withLock { $0.passes += 1 }
    publishSyncing()
    let report = await drain()
    activity.withLock { $0.passes -= 1 }
    passRunning = false
    let waiters = passWaiters
    passWaiters = []
    waiters.forEach { $0.resume() }
    publishSyncing()
    noteReplayOutcome(report)
    return report
  }

  /// Waits until no pass runs (for tests and a command about to exit).
  public func waitForIdle() async {
    while passRunning {
      await withCheckedContinuation { passWaiters.append($0) }
    }
  }

  // MARK: - The run loop

  /// The run loop, until cancelled: follows the path monitor (publishing online and offline),
  /// and runs a pass whenever a write asks for one (``requestReplay()``), the path becomes usable
  /// after another status, or the `ReplayBackoff` wait after a pass a transient failure stopped
  /// ends (full jitter, growing with each consecutive failed pass, `Retry-After` as a floor; a
  /// pass that ends otherwise, or a path change, resets it; no wait runs while the path is known
  /// to be down). Every pass runs in this call's task: cancelling it ends the loop, its wait and
  /// its pass at once. Several calls may run at once (each counts as watching); passes still
  /// never interleave. Does not run the monitor itself (the caller runs `pathMonitor.run()`).
  /// - Parameter replayingFirst: whether to send the outbox once as it starts (unless the path
  ///   is known to be down), after it counts as watching: a write made at any moment is then
  ///   either in that pass or asks for its own, with no window between the two.
  public func run(replayingFirst: Bool = false) async {
    loop.withLock { $0.watchers += 1 }
    defer {
      if loop.withLock({ loop -> Int in
        loop.watchers -= 1
        return loop.watchers
      }) == 0 {
        disarmRetry()
      }
    }
    // A pass that failed before the loop began (the first replay of `sync --watch`).
    if let stop = lastTransientStop, retryDelay == nil, !retryDue, !passRunning, state.isOnline {
      arm(after: stop)
    }
    let status = pathMonitor?.currentPath.status ?? .unknown
    if replayingFirst, status == .satisfied || status == .unknown { _ = await replay() }
    let monitor = pathMonitor
    await withTaskGroup(of: Void.self) { group in
      if let monitor { group.addTask { await self.follow(monitor) } }
      group.addTask { await self.serve() }
      // The path's stream ending ends the loop, as cancellation does.
      _ = await group.next()
      group.cancelAll()
    }
  }

  /// Follows the path: publishes it, resets the backoff on a change, asks for a pass on its
  /// return.
  private func follow(_ monitor: any PathMonitor) async {
    var previous: PathStatus?
    for await path in monitor.updates() {
      if let previous, previous != path.status {
        failedReplays = 0
        disarmRetry()
      }
      publisher.update { $0.path = path.status }
      defer { previous = path.status }
      guard path.status == .satisfied, let previous, previous != .satisfied else { continue }
      loop.withLock { $0.requested &+= 1 }
      doorbell.ring()
    }
  }

  /// Runs the passes the loop is asked for, and sleeps the armed retry wait, until cancelled.
  private func serve() async {
    while !Task.isCancelled {
      let seen = doorbell.rings
      if retryDue || requested != served {
        retryDue = false
        _ = await replay()
        continue
      }
      if let delay = retryDelay, retrySleeper == nil, state.isOnline {
        await withTaskGroup(of: Void.self) { group in
          group.addTask { await self.sleepForRetry(delay) }
          group.addTask { await self.doorbell.wait(since: seen) }
          _ = await group.next()
          group.cancelAll()
        }
      } else {
        await doorbell.wait(since: seen)
      }
    }
  }

  private func sleepForRetry(_ delay: Duration) async {
    // Kept so that `disarmRetry()` (a path change) cancels this sleep synchronously.
    withUnsafeCurrentTask { retrySleeper = $0 }
    defer { retrySleeper = nil }
    do {
      try await clock.sleep(for: delay)
    } catch {
      return
    }
    guard retryDelay != nil else { return }
    retryDelay = nil
    retryDue = true
    doorbell.ring()
  }

  private func arm(after error: CourierError) {
    disarmRetry()
    retryDelay = configuration.replayBackoff.delay(
      afterFailures: max(1, failedReplays), retryAfter: error.retryAfter, jitter: random.next())
    doorbell.ring()
  }

  /// Cancels the armed retry and its sleep (a pass it already started goes on).
  private func disarmRetry() {
    guard retryDelay != nil || retryDue || retrySleeper != nil else { return }
    retryDelay = nil
    retryDue = false
    retrySleeper?.cancel()
    doorbell.ring()
  }

  /// Counts a finished pass for the retries: a transient stop with entries left arms the next
  /// pass (while a run loop runs and the path is not known to be down), any other end but a
  /// cancellation resets the count.
  private func noteReplayOutcome(_ report: ReplayReport) {
    guard let error = report.stoppedBy else {
      failedReplays = 0
      lastTransientStop = nil
      disarmRetry()
      return
    }
    if error.kind == .cancelled { return }
    guard error.isTransient, report.pending > 0 else {
      failedReplays = 0
      lastTransientStop = nil
      disarmRetry()
      return
    }
    failedReplays += 1
    lastTransientStop = error
    if watchers > 0 && state.isOnline { arm(after: error) }
  }

  // MARK: - One pass

  private enum Step {
    case next
    /// The entry was kept conflicted, or has no route: later entries of its record wait.
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
      var unrouted = 0
      while let (entry, superseded) = queue.next() {
        if Task.isCancelled {
          outcome = CourierError(.cancelled, context: "replay")
          break batches
        }
        guard let route = route(for: entry.key.collection) else {
          // No sender for this collection (yet): it waits, with its record's later entries.
          unrouted += 1
          queue.hold(entry.key)
          continue
        }
        // A newer write of a record supersedes its earlier refused ones.
        for id in superseded {
          try? store.remove(id)
        }
        let step = await send(entry, route: route, report: &report, resends: &resends)
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
      report.withoutSender = unrouted
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

  private func send(
    _ queued: OutboxEntry, route: ReplayRoute, report: inout ReplayReport,
    resends: inout [UUID: Int]
  ) async -> Step {
    let entry: OutboxEntry
    do {
      entry = try store.recordAttempt(queued.id)
    } catch let error as StoreError where error.code == .notFound {
      return .reread
    } catch {
      return .stop(Self.courierError(error, context: "counting a send attempt"))
    }
    let answer = await route.sender.send(entry, progress: nil)
    return carryOut(entry, answer: answer, route: route, report: &report, resends: &resends)
  }

  /// Carries out what `ReplayDecision` decided for an entry: the store calls, the report and
  /// the published state. Every rule is in the decision; this only executes it.
  private func carryOut(
    _ entry: OutboxEntry, answer: ReplayAnswer, route: ReplayRoute, report: inout ReplayReport,
    resends: inout [UUID: Int]
  ) -> Step {
    let decision = route.decision
    // The merge needs the copy the write started from: the operation carries it; an entry
    // written before it did falls back to the record's server copy (only read for a conflict,
    // so a plain replay costs no extra read).
    var base: ServerRecord?
    if decision.policy == .merge, entry.operation.basePayload == nil,
      case .failed(let error) = answer, error.kind == .conflict
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
          let current = decision.schema.json(for: server)
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

  // MARK: - Settling entries by hand

  /// Settles a conflict kept for the user (manual policy).
  /// - Parameters:
  ///   - operationID: the conflicted entry's operation id.
  ///   - keepLocal: true to send the local write again on top of the server's version; false
  ///     to take the server's record and drop the local changes to that record.
  /// - Throws: `StoreError.notFound` when no such entry is conflicted.
  public nonisolated func resolveConflict(operationID: UUID, keepLocal: Bool) throws {
    guard let entry = try store.entry(operationID),
      case .conflicted(let json) = entry.state
    else {
      throw StoreError(.notFound, "No conflicted outbox entry has operation id \(operationID).")
    }
    let server = try? schema(of: entry).serverRecord(from: json)
    if keepLocal {
      try store.markPending(operationID, baseVersion: server?.version)
    } else {
      try store.revert(entry.key)
      if let server { try store.applyServerRecord(server, key: entry.key) }
    }
    reloadState()
    if keepLocal { requestReplay() }
  }

  /// Puts a refused or conflicted entry back in the queue, to be sent by the next pass.
  ///
  /// The entry gets a new operation id, hence a new `Idempotency-Key` (decision 0412): the
  /// server stored its refusal (or its 409) under the old key and would answer the same again.
  /// A conflicted entry is also rebased on the server's version it was shown, as
  /// ``resolveConflict(operationID:keepLocal:)`` does with `keepLocal`. The entry keeps its place
  /// in the queue (sequence number) and its attempt count. A pending entry is left as it is.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry now pending (with its new operation id).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  public nonisolated func retryEntry(operationID: UUID) throws -> OutboxEntry {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let retried = try requeue(entry)
    reloadState()
    return retried
  }

  /// Puts every refused and conflicted entry back in the queue (see ``retryEntry(operationID:)``).
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written (the entries before the failure
  ///   are requeued, the others are kept as they were).
  @discardableResult
  public nonisolated func retryAllEntries() throws -> [OutboxEntry] {
    defer { reloadState() }
    return try store.entries().filter { !$0.state.isPending }.map { try requeue($0) }
  }

  /// Drops an outbox entry with every local change to its record (the entry's and any later
  /// ones: they were made on top of it), and shows the server's copy again.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` when no entry has this id; `StoreError` when the store
  ///   cannot be written.
  @discardableResult
  public nonisolated func discardEntry(operationID: UUID) throws -> (
    entry: OutboxEntry, record: LocalRecord?
  ) {
    guard let entry = try store.entry(operationID) else {
      throw StoreError(.notFound, "No outbox entry has operation id \(operationID).")
    }
    let after = try store.revert(entry.key)
    reloadState()
    return (entry, after)
  }

  private nonisolated func requeue(_ entry: OutboxEntry) throws -> OutboxEntry {
    var base: Int?
    switch entry.state {
    case .pending:
      return entry
    case .rejected:
      break
    case .conflicted(let json):
      base = (try? schema(of: entry).serverRecord(from: json))?.version
    }
    return try store.requeue(entry.id, as: UUID(), baseVersion: base)
  }

  /// The record schema of an entry's collection (the contract's when it has no route).
  private nonisolated func schema(of entry: OutboxEntry) -> RecordSchema {
    route(for: entry.key.collection)?.decision.schema ?? .standard
  }

  // MARK: - Errors

  static func courierError(_ error: any Error, context: String) -> CourierError {
    if let error = error as? CourierError { return error }
    return CourierError.wrapping(error, context: context)
  }
}
