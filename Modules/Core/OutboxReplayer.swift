import CoreMetrics
import CourierDomain
import CourierPorts
import Logging
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends the outbox of one local store: the entries of every collection, in outbox order, each
/// through the `ReplaySender` of its collection's ``ReplayRoute``, and carries out what
/// `ReplayDecision` decides from the answer (decisions 0410, 0414, 1202, 2301).
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
/// - Every pass, whoever asks for it, is logged at `debug` (what it did, what stopped it, the
///   backoff the run loop will wait) and timed (`courier_replay_duration_seconds`), and every
///   answer that proves a delivery records its lag from the write's commit
///   (`courier_replay_lag_seconds`; decision 2203).
///
/// It decides nothing itself: the coordination is `ReplayMachine`'s, a pass is `ReplayPass`'s,
/// a window's sends `ReplayWindow`'s, each a value fed events under this object's one lock; this
/// shell carries their actions out against the store, the senders and the clock.
package final class OutboxReplayer: Sendable {
  /// The replayer's settings.
  package struct Configuration: Sendable {
    /// The wait before the run loop replays again after a pass a transient failure stopped.
    package var replayBackoff: ReplayBackoff
    /// How many entries of different records may be on their way at once (decision 1204): 1
    /// (the default) sends the outbox strictly in its order (global FIFO, 0410); more sends a
    /// window's entries concurrently over that many keep-alive connections, keeping each
    /// record's order but not the order across records.
    package var maxConcurrentSends: Int
    /// The most entries of one window: their attempts are counted in one commit before the
    /// first is sent and their completions in one commit after the last answer.
    package var maxWindow: Int
    /// What kind of work may use which path (decision 2610): an entry the policy holds back on
    /// the current path waits, with its record's later entries, until the path changes.
    package var pathPolicy: PathPolicy
    /// Whether queued uploads may use an expensive path this time whatever the policy says
    /// (`courier sync --allow-expensive`, `allowsExpensiveNetworkAccess`).
    package var allowsExpensive: Bool
    /// The work an entry is, its bytes and its own permission to use an expensive path: by
    /// default `PathPolicy.work(of:)` (queued uploads and record writes).
    package var work:
      @Sendable (OutboxEntry) -> (
        work: PathPolicy.Work, bytes: Int64?, allowsExpensive: Bool
      )
    /// Told when a pass stopped on a reply that was not the server's: the captive-portal
    /// probe checks the path then (decision 2612). Nil for none.
    package var onNotTheServer: (@Sendable () async -> Void)?

    /// Creates settings.
    /// - Parameters:
    ///   - replayBackoff: the wait between passes after transient failures.
    ///   - maxConcurrentSends: sends at once; 1 keeps the outbox's global order.
    ///   - maxWindow: the most entries of one window.
    ///   - pathPolicy: what may use which path.
    ///   - allowsExpensive: whether uploads may use an expensive path whatever the policy says.
    ///   - work: the work an entry is.
    ///   - onNotTheServer: told when a pass stopped on a reply that was not the server's.
    package init(
      replayBackoff: ReplayBackoff = ReplayBackoff(), maxConcurrentSends: Int = 1,
      maxWindow: Int = 256, pathPolicy: PathPolicy = .standard, allowsExpensive: Bool = false,
      work:
        @escaping @Sendable (OutboxEntry) -> (
          work: PathPolicy.Work, bytes: Int64?, allowsExpensive: Bool
        ) = PathPolicy.work(of:), onNotTheServer: (@Sendable () async -> Void)? = nil
    ) {
      self.replayBackoff = replayBackoff
      self.maxConcurrentSends = max(1, maxConcurrentSends)
      self.maxWindow = max(1, maxWindow)
      self.pathPolicy = pathPolicy
      self.allowsExpensive = allowsExpensive
      self.work = work
      self.onNotTheServer = onNotTheServer
    }
  }

  /// The coordination, fed events under the lock; its waiters are continuations.
  typealias Machine = ReplayMachine<CheckedContinuation<Void, Never>>

  /// What the lock guards: the coordination and the routes.
  struct Shared {
    var machine: Machine
    var routes: [String: ReplayRoute] = [:]
  }

  /// The local store whose outbox it sends.
  package let store: any LocalStore
  /// The settings.
  package let configuration: Configuration
  /// The path monitor the run loop follows and the path policy is checked against.
  package let pathMonitor: (any PathMonitor)?
  let now: @Sendable () -> Date
  let clock: any Clock<Duration>
  let random: any RandomSource
  let publisher: SyncStatePublisher
  let shared: Mutex<Shared>
  /// Where each pass is logged.
  let logger: Logger
  /// Where passes and delivery lags are recorded.
  let metrics: CourierMetrics

  /// Creates a replayer for a store.
  /// - Parameters:
  ///   - store: the local store (records and outbox).
  ///   - pathMonitor: the path monitor the run loop follows; nil when none.
  ///   - configuration: the settings.
  ///   - now: the wall clock (the time of the last successful pass, a delivery's lag).
  ///   - clock: the clock the run loop waits on between passes after transient failures, and
  ///     passes are timed on.
  ///   - random: the jitter source of those waits.
  ///   - logger: where each pass is logged, at `debug`; by default nowhere.
  ///   - metrics: the application's metrics backend, for the passes' durations and the
  ///     deliveries' lags; by default the global system's factory.
  package convenience init(
    store: any LocalStore, pathMonitor: (any PathMonitor)? = nil,
    configuration: Configuration = Configuration(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    random: any RandomSource = SystemRandomSource(),
    logger: Logger = .courierDiscarding, metrics: any MetricsFactory = MetricsSystem.factory
  ) {
    self.init(
      store: store, pathMonitor: pathMonitor, configuration: configuration, now: now,
      clock: clock, random: random, logger: logger, metrics: CourierMetrics(factory: metrics))
  }

  /// Creates a replayer that records in metrics shared with the rest of a session (or an
  /// engine's client).
  package init(
    store: any LocalStore, pathMonitor: (any PathMonitor)?, configuration: Configuration,
    now: @escaping @Sendable () -> Date, clock: any Clock<Duration>, random: any RandomSource,
    logger: Logger, metrics: CourierMetrics
  ) {
    self.store = store
    self.pathMonitor = pathMonitor
    self.configuration = configuration
    self.now = now
    self.clock = clock
    self.random = random
    self.logger = logger
    self.metrics = metrics
    let path = pathMonitor?.currentPath.status ?? .unknown
    var initial = SyncState(path: path)
    if let entries = try? store.entries() { Self.count(entries, into: &initial) }
    publisher = SyncStatePublisher(initial)
    shared = Mutex(
      Shared(machine: ReplayMachine(backoff: configuration.replayBackoff, path: path)))
  }

  /// Feeds the machine an event under the lock; its actions are carried out after.
  func event(_ feed: (inout Machine) -> [Machine.Action]) {
    perform(shared.withLock { feed(&$0.machine) })
  }

  /// Carries out the machine's actions, outside the lock.
  func perform(_ actions: [Machine.Action]) {
    for action in actions {
      switch action {
      case .resume(let waiters):
        for waiter in waiters { waiter.resume() }
      case .publishActivity:
        // The value when published, not when decided: two threads' changes cannot publish an
        // older value last.
        publisher.update { state in state.isSyncing = shared.withLock { $0.machine.isSyncing } }
      }
    }
  }

  // MARK: - Routes

  /// Registers where a collection's entries go, replacing its earlier route. Takes effect from
  /// the next window a pass sends.
  /// - Parameter route: the route.
  package func register(_ route: ReplayRoute) {
    shared.withLock { $0.routes[route.collection] = route }
  }

  /// The route of a collection.
  /// - Parameter collection: the collection's name in the local store.
  /// - Returns: its route, or nil when none is registered.
  package func route(for collection: String) -> ReplayRoute? {
    shared.withLock { $0.routes[collection] }
  }

  /// The collections with a route, sorted.
  package var routedCollections: [String] { shared.withLock { $0.routes.keys.sorted() } }

  // MARK: - Path policy

  /// The path the policy is checked against: the monitor's own current one.
  package var currentPath: NetworkPath { pathMonitor?.currentPath ?? .unknown }

  /// Why an entry waits for another path (decision 2610), or nil when it may go on this one.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - path: the path; the monitor's current one by default.
  /// - Returns: the reason it waits, or nil.
  package func pathWait(for entry: OutboxEntry, on path: NetworkPath? = nil) -> PathPolicy.Wait? {
    let work = configuration.work(entry)
    return configuration.pathPolicy.wait(
      for: work.work, bytes: work.bytes, on: path ?? currentPath,
      allowsExpensive: work.allowsExpensive || configuration.allowsExpensive)
  }

  /// The path a pass checks the policy against when nobody follows the path (a one-shot
  /// `sync`, the send after an `articles add`): the monitor's snapshot, asked once, when a
  /// pending entry is one the policy may hold for a metered or data-saving path (an upload);
  /// nil otherwise, and whenever the monitor runs (its current path is then live). Without it,
  /// an unfollowed monitor's path is `unknown` (neither metered nor constrained) and a large
  /// queued upload would go out on a metered link (issue 26's end-to-end test).
  /// - Returns: the path for this pass, or nil to read the monitor's current one per window.
  func passPath() async -> NetworkPath? {
    guard let pathMonitor, pathMonitor.currentPath.status == .unknown,
      let entries = try? store.entries(),
      entries.contains(where: { $0.state.isPending && configuration.work($0).work != .writes })
    else { return nil }
    return await pathMonitor.snapshot()
  }

  // MARK: - State

  /// A stream of states: the current one first, then every change (`bufferingNewest(1)`).
  /// - Returns: the stream.
  package func states() -> AsyncStream<SyncState> { publisher.updates() }

  /// The current state.
  package var state: SyncState { publisher.current }

  /// Reloads the outbox part of the state from the store. The read happens inside the
  /// publisher's update, so two reloads (a write here, another process's write noticed there)
  /// never publish an older count after a newer one.
  /// - Returns: the entries read (nil when the store cannot be read).
  @discardableResult
  package func reloadState() -> [OutboxEntry]? {
    var read: [OutboxEntry]?
    publisher.update { state in
      guard let entries = try? store.entries() else { return }
      read = entries
      Self.count(entries, into: &state)
    }
    return read
  }

  /// Says that a reader started (`true`) or finished (`false`) a refresh, for `isSyncing`.
  /// - Parameters:
  ///   - started: whether it starts.
  ///   - failure: the refresh's failure when it finished (it becomes `lastError`); nil for a
  ///     success, which sets `lastSyncAt`.
  package func noteRefresh(started: Bool, failure: CourierError? = nil) {
    let actions = shared.withLock {
      started ? $0.machine.refreshStarted() : $0.machine.refreshEnded()
    }
    let finished = now()
    publisher.update { state in
      if !started {
        state.lastError = failure
        if failure == nil { state.lastSyncAt = finished }
      }
    }
    perform(actions)
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
    state.parked = entries.filter {
      if case .parked = $0.state { return true }
      return false
    }
  }

  /// Publishes the pending count after a write, as the store counts it (not one more than
  /// before: another reload may have counted this write already).
  /// - Parameter result: what the write did to the queue (nothing is published for a write
  ///   that left the count as it was).
  package func noteWrite(_ result: EnqueueResult) {
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
  package func requestReplay() {
    // The monitor's own current path, not the state the loop has caught up with: a write made
    // just after the interface showed "offline" must not be sent.
    let path = pathMonitor?.currentPath.status ?? state.path
    event { $0.writeCommitted(path: path) }
  }

  /// Sends the outbox once, in queue order, until it is empty or a failure that is not a refusal
  /// stops it; in the caller's task. A pass already running is waited for first, so two never
  /// interleave.
  /// - Returns: what this pass did.
  package func replay() async -> ReplayReport {
    await withCheckedContinuation { slot in event { $0.passRequested(slot) } }
    let started = metrics.isEnabled ? Self.instant(of: clock) : nil
    let report = await ReplayPassRunner(replayer: self, path: await passPath()).run()
    if report.stoppedBy?.kind == .notTheServer, let check = configuration.onNotTheServer {
      // Before the pass ends: whoever waits for it sees the path the check leaves.
      await check()
    }
    let duration = started?.elapsed()
    let (actions, retry) = shared.withLock { shared in
      (shared.machine.passEnded(report, jitter: { random.next() }), shared.machine.retryDelay)
    }
    // Logged and timed before anyone hears the pass ended (a caller waiting for idle).
    observe(report, after: duration, retry: retry)
    perform(actions)
    // A backoff sleep the outcome replaced has ended when the pass returns.
    await sleepCutShort()
    return report
  }

  /// Waits until no pass runs (for tests and a command about to exit).
  package func waitForIdle() async {
    await withCheckedContinuation { idle in event { $0.idleRequested(idle) } }
  }

  // MARK: - Errors

  static func courierError(_ error: any Error, context: String) -> CourierError {
    if let error = error as? CourierError { return error }
    return CourierError.wrapping(error, context: context)
  }
}
