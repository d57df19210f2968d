import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
    /// How many entries of different records may be on their way at once (decision 1204): 1
    /// (the default) sends the outbox strictly in its order (global FIFO, 0410); more sends a
    /// window's entries concurrently over that many keep-alive connections, keeping each
    /// record's order but not the order across records.
    public var maxConcurrentSends: Int
    /// The most entries of one window: their attempts are counted in one commit before the
    /// first is sent and their completions in one commit after the last answer.
    public var maxWindow: Int

    /// Creates settings.
    /// - Parameters:
    ///   - replayBackoff: the wait between passes after transient failures.
    ///   - maxConcurrentSends: sends at once; 1 keeps the outbox's global order.
    ///   - maxWindow: the most entries of one window.
    public init(
      replayBackoff: ReplayBackoff = ReplayBackoff(), maxConcurrentSends: Int = 1,
      maxWindow: Int = 256
    ) {
      self.replayBackoff = replayBackoff
      self.maxConcurrentSends = max(1, maxConcurrentSends)
      self.maxWindow = max(1, maxWindow)
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

  /// Reloads the outbox part of the state from the store. The read happens inside the
  /// publisher's update, so two reloads (a write here, another process's write noticed there)
  /// never publish an older count after a newer one.
  public nonisolated func reloadState() {
    publisher.update { state in
      guard let entries = try? store.entries() else { return }
      Self.count(entries, into: &state)
    }
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

  /// Publishes the pending count after a write, as the store counts it (not one more than
  /// before: another reload may have counted this write already).
  /// - Parameter result: what the write did to the queue (nothing is published for a write
  ///   that left the count as it was).
  public nonisolated func noteWrite(_ result: EnqueueResult) {
    if case .coalesced = result { return }
    publisher.update { state in
      guard let counts = try? store.counts() else { return }
      state.pendingCount = counts.pending
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

  /// How a window ended besides its entries' own steps.
  private enum Halt: Sendable {
    /// A step changed the queue (a re-send, a merge, the server's copy taken): read it again.
    case reread
    /// The pass stops with this error (transient, local, cancelled).
    case stop(CourierError)
  }

  /// What came back for one entry of a window, and what `ReplayDecision` decided.
  private struct Settled: Sendable {
    var entry: OutboxEntry
    var route: ReplayRoute
    var answer: ReplayAnswer
    var step: ReplayStep
  }

  /// One pass: windows of entries (decision 1204), each one's attempts counted in one commit
  /// before any of it leaves, sent (in order, or up to `maxConcurrentSends` at once, at most one
  /// entry per record), and its completions committed together; a record's next entry goes in
  /// a later window, after its completion rebased it. The window starts at one entry and
  /// doubles after each window that ended cleanly, up to `maxWindow`.
  private func drain() async -> ReplayReport {
    var report = ReplayReport()
    var resends: [UUID: Int] = [:]
    var outcome: CourierError?
    let concurrency = max(1, configuration.maxConcurrentSends)
    var windowSize = 1
    reads: while true {
      let all: [OutboxEntry]
      do {
        all = try store.entries()
      } catch {
        outcome = Self.courierError(error, context: "reading the outbox")
        break
      }
      var schedule = ReplaySchedule(all)
      switch await sendWindows(
        &schedule, report: &report, resends: &resends, windowSize: &windowSize,
        concurrency: concurrency)
      {
      case .stop(let error):
        outcome = error
        break reads
      case .reread:
        continue reads
      case .exhausted(let didWork):
        // Writes made during the pass are in the next read; a read with nothing to do ends it.
        if !didWork { break reads }
      }
    }
    report.stoppedBy = outcome
    let finished = now()
    publisher.update { state in
      // The counts alone when nothing is refused or conflicted: no entry to decode.
      if let counts = try? store.counts(), counts.rejected == 0, counts.conflicted == 0 {
        report.pending = counts.pending
        state.pendingCount = counts.pending
        state.rejected = []
        state.conflicted = []
      } else {
        let entries = (try? store.entries()) ?? []
        report.pending = entries.filter { $0.state.isPending }.count
        Self.count(entries, into: &state)
      }
      if let outcome {
        state.lastError = outcome
      } else {
        state.lastError = nil
        state.lastSyncAt = finished
      }
    }
    return report
  }

  /// How one read of the outbox ended.
  private enum ReadEnd {
    /// Nothing left to pick; whether anything was sent or settled.
    case exhausted(didWork: Bool)
    /// A step changed the queue, or an entry went away since the read: read it again.
    case reread
    /// The pass stops with this error.
    case stop(CourierError)
  }

  /// A window whose attempts are counted, ready to send or on its way.
  private struct Flight {
    var picks: [ReplaySchedule.Pick]
    var attempted: [OutboxEntry]
    /// An entry of the window went away since the read (another process coalesced it).
    var short: Bool { attempted.count < picks.count }
  }

  /// Sends the windows of one read, pipelined (decision 1204): while a window is on its way,
  /// the next one is picked among the records not in flight and its attempts are committed;
  /// once the window in flight has every answer, and none of them stops the pass or changes the
  /// queue, the next one leaves at once and the finished one's outcomes (its completion commit,
  /// the rebase of its records' next entries) are carried out while it goes. A window still
  /// leaves only after the one before has every answer, so the global order (sequential) and
  /// "nothing after a failure" hold as with one window at a time. The next window is counted
  /// ahead only after a window of this read ended cleanly: a pass that fails at once counts
  /// nothing more than before.
  private func sendWindows(
    _ schedule: inout ReplaySchedule, report: inout ReplayReport, resends: inout [UUID: Int],
    windowSize: inout Int, concurrency: Int
  ) async -> ReadEnd {
    var unrouted = 0
    var didWork = false
    var clean = 0
    let maxWindow = max(1, configuration.maxWindow)
    return await withTaskGroup(of: ([Settled], Halt?).self) { group -> ReadEnd in
      var flying: Flight?
      var ready: Flight?
      var exhausted = false
      // Every return with a window on its way cancels it first: the group waits for it.
      func stop(_ end: ReadEnd) -> ReadEnd {
        group.cancelAll()
        return end
      }
      func launch(_ next: Flight) {
        let resendsNow = resends
        group.addTask {
          await self.send(next.attempted, concurrency: concurrency, resends: resendsNow)
        }
        flying = next
        ready = nil
      }
      while true {
        if Task.isCancelled { return stop(.stop(CourierError(.cancelled, context: "replay"))) }
        // The next window: now when none is on its way; ahead, while one is, after a clean one.
        if ready == nil, !exhausted, flying == nil || clean > 0 {
          // Counted ahead, a window has the size it will have if the one in flight ends
          // cleanly: the sizes are those of one window at a time.
          let limit = flying == nil ? windowSize : min(windowSize * 2, maxWindow)
          let picks = schedule.nextWindow(
            limit: limit, sequential: concurrency == 1,
            routed: { self.route(for: $0.key.collection) != nil }, unrouted: &unrouted)
          report.withoutSender = unrouted
          if picks.isEmpty {
            // Nothing can go before the window in flight settles, or nothing is left.
            exhausted = flying == nil
          } else {
            didWork = true
            // A newer write of a record supersedes its earlier refused ones.
            for id in picks.flatMap(\.superseded) { try? store.remove(id) }
            do {
              ready = Flight(picks: picks, attempted: try store.recordAttempts(picks.map(\.entry)))
            } catch {
              return stop(.stop(Self.courierError(error, context: "counting send attempts")))
            }
          }
        }
        if flying == nil {
          guard let next = ready else {
            if exhausted { return .exhausted(didWork: didWork) }
            continue
          }
          launch(next)
          continue
        }
        guard let finished = flying, let (answered, halt) = await group.next() else {
          return stop(.stop(CourierError(.cancelled, context: "replay")))
        }
        flying = nil
        var settled = answered
        let ended = halt == nil && !finished.short
        if ended, let next = ready, !Task.isCancelled {
          // The next window leaves now, while this one's outcomes are committed.
          launch(next)
        }
        if let failure = carryOut(
          &settled, report: &report, resends: &resends, schedule: &schedule)
        {
          return stop(.stop(failure))
        }
        schedule.settle(finished.picks.map(\.entry.key))
        switch halt {
        case .stop(let error)?: return stop(.stop(error))
        case .reread?: return stop(.reread)
        case nil: break
        }
        // An entry coalesced away since the read (another process's write): read again.
        if finished.short { return stop(.reread) }
        clean += 1
        windowSize = min(windowSize * 2, maxWindow)
        // Records this window held may be picked again.
        exhausted = false
      }
    }
  }

  /// Sends a window's entries, their attempts counted, and decides each answer: in order when
  /// `concurrency` is 1, else up to `concurrency` at once. No new send starts after an answer
  /// that stops the pass or changes the queue; the sends already out finish. The window runs on
  /// its senders' task executor when they share one (decision 1205); the commits stay on the
  /// actor.
  private nonisolated func send(
    _ entries: [OutboxEntry], concurrency: Int, resends: [UUID: Int]
  ) async -> ([Settled], Halt?) {
    var settled: [Settled] = []
    var halt: Halt?
    func decided(_ entry: OutboxEntry, _ route: ReplayRoute, _ answer: ReplayAnswer) {
      let step = decide(entry, answer: answer, route: route, resends: resends[entry.id, default: 0])
      settled.append(Settled(entry: entry, route: route, answer: answer, step: step))
      if halt == nil {
        switch step {
        case .stop(let error): halt = .stop(error)
        case .resend, .resendMerged, .takeServer: halt = .reread
        case .complete, .keepConflict, .reject: break
        }
      }
    }
    let routed = entries.compactMap { entry in route(for: entry.key.collection).map { (entry, $0) }
    }
    // On the transport's thread when every sender names the same one: each answer resumes the
    // window's task there, and its next request is handed over there, with no thread woken.
    await withTaskExecutorPreference(Self.sharedExecutor(routed.map(\.1.sender))) {
      if concurrency == 1 {
        for (entry, route) in routed {
          if Task.isCancelled {
            halt = halt ?? .stop(CourierError(.cancelled, context: "replay"))
            break
          }
          decided(entry, route, await route.sender.send(entry, progress: nil))
          if halt != nil { break }
        }
        return
      }
      await withTaskGroup(of: (Int, ReplayAnswer).self) { group in
        var next = 0
        var running = 0
        func launch() {
          while running < concurrency, next < routed.count, halt == nil, !Task.isCancelled {
            let index = next
            let (entry, route) = routed[index]
            group.addTask { (index, await route.sender.send(entry, progress: nil)) }
            next += 1
            running += 1
          }
        }
        launch()
        while let (index, answer) = await group.next() {
          running -= 1
          let (entry, route) = routed[index]
          decided(entry, route, answer)
          if Task.isCancelled, halt == nil {
            halt = .stop(CourierError(.cancelled, context: "replay"))
          }
          launch()
        }
      }
    }
    return (settled, halt)
  }

  /// The task executor every sender names (`ReplaySender.taskExecutor`), or nil when one names
  /// none or two differ.
  private static func sharedExecutor(_ senders: [any ReplaySender]) -> (any TaskExecutor)? {
    guard let first = senders.first?.taskExecutor else { return nil }
    let id = ObjectIdentifier(first)
    for sender in senders.dropFirst() {
      guard let other = sender.taskExecutor, ObjectIdentifier(other) == id else { return nil }
    }
    return first
  }

  /// What `ReplayDecision` decides for an answer. The merge needs the copy the write started
  /// from: the operation carries it; an entry written before it did falls back to the record's
  /// server copy (only read for a conflict, so a plain replay costs no extra read).
  private nonisolated func decide(
    _ entry: OutboxEntry, answer: ReplayAnswer, route: ReplayRoute, resends: Int
  ) -> ReplayStep {
    var base: ServerRecord?
    if route.decision.policy == .merge, entry.operation.basePayload == nil,
      case .failed(let error) = answer, error.kind == .conflict
    {
      base = (try? store.record(entry.key))?.server
    }
    return route.decision.step(for: entry, answer: answer, resends: resends, base: base)
  }

  /// Carries out a window's steps: every completion in one commit, then each other step's store
  /// calls, the report and the published state. Every rule is in the decision; this only
  /// executes it.
  /// - Returns: the error that stops the pass when the store could not record an outcome.
  private func carryOut(
    _ settled: inout [Settled], report: inout ReplayReport, resends: inout [UUID: Int],
    schedule: inout ReplaySchedule
  ) -> CourierError? {
    var completions: [OutboxCompletion] = []
    var delivered = 0
    for item in settled {
      guard case .complete(let server) = item.step else { continue }
      completions.append(OutboxCompletion(entry: item.entry, serverRecord: server))
      if case .delivered = item.answer { delivered += 1 }
    }
    if !completions.isEmpty {
      do {
        schedule.apply(try store.completeAll(completions))
      } catch {
        return Self.courierError(error, context: "recording \(completions.count) completions")
      }
      report.sent += completions.count
      publisher.update { $0.pendingCount = max(0, $0.pendingCount - delivered) }
    }
    for index in settled.indices {
      let item = settled[index]
      do {
        try execute(item, report: &report, resends: &resends, schedule: &schedule)
      } catch {
        return Self.courierError(error, context: "recording the outcome of \(item.entry.key)")
      }
    }
    return nil
  }

  /// Carries out one step other than a completion.
  private func execute(
    _ item: Settled, report: inout ReplayReport, resends: inout [UUID: Int],
    schedule: inout ReplaySchedule
  ) throws {
    let entry = item.entry
    var step = item.step
    if case .resendMerged(let payload, let server) = step {
      do {
        resends[entry.id, default: 0] += 1
        try store.rebase(entry.id, payload: payload, onto: server)
        report.conflictsMerged += 1
        return
      } catch let error as StoreError where error.code == .unusable {
        // A store that cannot merge: keep the conflict for the user, nothing is dropped.
        step = .keepConflict(
          current: item.route.decision.schema.json(for: server), adopting: server)
      }
    }
    switch step {
    case .complete, .stop, .resendMerged:
      return  // completions are committed together; a stop ends the pass; merges are above
    case .resend(let base, let server):
      resends[entry.id, default: 0] += 1
      if let server { try store.applyServerRecord(server, key: entry.key) }
      try store.markPending(entry.id, baseVersion: base)
      report.conflictsResent += 1
    case .takeServer(let server):
      try store.revert(entry.key)
      if let server { try store.applyServerRecord(server, key: entry.key) }
      report.conflictsTakenFromServer += 1
    case .keepConflict(let current, let server):
      if let server { try store.applyServerRecord(server, key: entry.key) }
      let kept = try store.markConflicted(entry.id, serverRecord: current)
      report.conflictsKept += 1
      schedule.hold(entry.key)
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.conflicted.append(kept)
      }
    case .reject(let message, let code):
      let rejected = try store.markRejected(entry.id, message: message, code: code)
      report.rejected += 1
      let error: CourierError? =
        if case .failed(let error) = item.answer { error } else { nil }
      publisher.update {
        $0.pendingCount = max(0, $0.pendingCount - 1)
        $0.rejected.append(rejected)
        $0.lastError = error
      }
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
