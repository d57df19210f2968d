/// The replayer's coordination as a value (decisions 0410, 0413, 1202, 2301): one pass at a time
/// and who waits for it, when the run loops replay or sleep, and the backoff after passes a
/// transient failure stopped. Each method is an event (a pass asked for or ended, a write
/// committed, the path changed, a run loop started, waits or ended, its timer fired, a refresh);
/// it returns what the shell does: resume waiters, publish whether it is syncing. A run loop asks
/// `loopNext()` what to do and is told to run a pass or to wait, with a timer when a backoff is
/// armed.
///
/// `Waiter` is what the shell resumes (a continuation; a name in the tests). Pure: table-tested
/// in `ReplayMachineTests` without a clock, a transport or a store; `OutboxReplayer` feeds it
/// under one lock and carries its actions out.
package struct ReplayMachine<Waiter> {
  /// What the shell does after an event.
  package enum Action {
    /// Resume these waiters: a pass given the slot, callers waiting for idle, run loops woken.
    case resume([Waiter])
    /// `isSyncing` may have changed: publish the machine's current value.
    case publishActivity
  }

  /// What a run loop does next.
  package enum LoopStep: Equatable, Sendable {
    /// Run a pass in the loop's task.
    case pass
    /// Wait until woken (`loopWaits`), and for the timer when it has one.
    case wait(LoopWait)
  }

  /// One wait of a run loop: it is woken by any event after `epoch`; `timer` is the backoff it
  /// sleeps, the only one while it waits.
  package struct LoopWait: Equatable, Sendable {
    /// Names the wait (and its timer).
    package var id: UInt64
    /// The wake-ups counted when the wait was decided: a later one ends it at once.
    package var epoch: UInt64
    /// How long to sleep before the retry is due; nil when no retry is armed for this loop.
    package var timer: Duration?
  }

  /// The backoff's state: none, armed (a loop should sleep it), being slept by a loop's wait, or
  /// due (the next loop step replays).
  private enum Retry: Equatable {
    case none
    case armed(Duration)
    case sleeping(Duration, wait: UInt64)
    case due
  }

  private let backoff: ReplayBackoff
  /// The path as the run loops last heard it (`SyncState.path`).
  package private(set) var path: PathStatus
  /// Whether a pass runs (passes never interleave).
  package private(set) var passRunning = false
  private var passWaiters: [Waiter] = []
  private var idleWaiters: [Waiter] = []
  /// How many run loops are active.
  package private(set) var watchers = 0
  /// Passes the run loops were asked for, and how many of those a started pass covers.
  private var requested: UInt64 = 0
  private var served: UInt64 = 0
  private var loopWaiters: [UInt64: Waiter] = [:]
  private var nextWaitID: UInt64 = 0
  private var epoch: UInt64 = 0
  /// Refreshes in progress (readers revalidating), for `isSyncing`.
  private var refreshes = 0
  /// Consecutive passes a transient failure stopped.
  package private(set) var failedReplays = 0
  /// The failure that stopped the last of them (a loop that starts later arms its retry).
  package private(set) var lastTransientStop: CourierError?
  private var retry = Retry.none
  /// Loop waits whose backoff sleep was dropped and has not ended yet, and who waits for that.
  private var cutShort = Set<UInt64>()
  private var cutShortWaiters: [Waiter] = []

  /// Creates the machine.
  /// - Parameters:
  ///   - backoff: the wait between passes after transient failures.
  ///   - path: the path known at the start.
  package init(backoff: ReplayBackoff, path: PathStatus) {
    self.backoff = backoff
    self.path = path
  }

  /// Whether a pass or a refresh is in progress (`SyncState.isSyncing`).
  package var isSyncing: Bool { passRunning || refreshes > 0 }

  /// The armed backoff, whether a loop sleeps it or not; nil when none is.
  package var retryDelay: Duration? {
    switch retry {
    case .armed(let delay), .sleeping(let delay, _): delay
    case .none, .due: nil
    }
  }

  /// Whether the backoff ended and the next loop step replays.
  package var isRetryDue: Bool { retry == .due }

  /// Whether a path status lets the replay try the network (unknown is never offline).
  package static func isUsable(_ status: PathStatus) -> Bool {
    status == .satisfied || status == .unknown
  }

  // MARK: - Passes

  /// A caller asks for a pass: it gets the slot now (resumed at once), or waits for the running
  /// pass to end and is handed the slot then, in the order they asked.
  package mutating func passRequested(_ waiter: Waiter) -> [Action] {
    guard !passRunning else {
      passWaiters.append(waiter)
      return []
    }
    passRunning = true
    served = requested
    return [.resume([waiter]), .publishActivity]
  }

  /// A caller waits until no pass runs or waits for the slot.
  package mutating func idleRequested(_ waiter: Waiter) -> [Action] {
    guard passRunning else { return [.resume([waiter])] }
    idleWaiters.append(waiter)
    return []
  }

  /// The pass ended with `report`. A transient stop with entries left counts one more failed
  /// pass and arms the next after `ReplayBackoff` (when a run loop runs and the path is usable);
  /// a cancelled pass changes nothing; any other end resets the count and drops an armed retry.
  /// The slot goes to the next caller waiting for it, else the replayer is idle.
  /// - Parameters:
  ///   - report: what the pass did.
  ///   - jitter: draws the backoff's jitter, only when one is armed.
  package mutating func passEnded(_ report: ReplayReport, jitter: () -> Double) -> [Action] {
    var actions = outcome(report, jitter: jitter)
    if passWaiters.isEmpty {
      passRunning = false
      let idle = idleWaiters
      idleWaiters = []
      if !idle.isEmpty { actions.append(.resume(idle)) }
      actions.append(.publishActivity)
    } else {
      served = requested
      actions.append(.resume([passWaiters.removeFirst()]))
    }
    return actions
  }

  private mutating func outcome(_ report: ReplayReport, jitter: () -> Double) -> [Action] {
    guard let error = report.stoppedBy else { return reset() }
    if error.kind == .cancelled { return [] }
    guard error.isTransient, report.pending > 0 else { return reset() }
    failedReplays += 1
    lastTransientStop = error
    guard watchers > 0, Self.isUsable(path) else { return [] }
    return arm(after: error, jitter: jitter)
  }

  private mutating func reset() -> [Action] {
    failedReplays = 0
    lastTransientStop = nil
    return disarm()
  }

  private mutating func arm(after error: CourierError, jitter: () -> Double) -> [Action] {
    let actions = disarm()
    retry = .armed(
      backoff.delay(
        afterFailures: max(1, failedReplays), retryAfter: error.retryAfter, jitter: jitter()))
    return actions + wake()
  }

  /// Drops the armed retry: a loop sleeping it is woken, which cancels its sleep
  /// (`sleepEndRequested` waits until it ended).
  private mutating func disarm() -> [Action] {
    guard retry != .none else { return [] }
    if case .sleeping(_, let wait) = retry { cutShort.insert(wait) }
    retry = .none
    return wake()
  }

  /// Wakes every waiting run loop.
  private mutating func wake() -> [Action] {
    epoch &+= 1
    guard !loopWaiters.isEmpty else { return [] }
    let woken = loopWaiters.sorted { $0.key < $1.key }.map(\.value)
    loopWaiters = [:]
    return [.resume(woken)]
  }

  // MARK: - Triggers

  /// A write was committed (or another process's writes noticed): the run loops replay, unless
  /// none runs or `path` (the monitor's own, newer than the loops') is known to be down.
  package mutating func writeCommitted(path: PathStatus) -> [Action] {
    guard Self.isUsable(path), watchers > 0 else { return [] }
    requested &+= 1
    return wake()
  }

  /// A run loop heard the path: a change resets the failure count and drops an armed retry
  /// (the shell waits for a sleep it cut short to end, `sleepEndRequested`, then publishes the
  /// path and says so, `pathPublished`).
  /// - Parameters:
  ///   - previous: the status this loop heard before (nil for its first).
  ///   - status: the status now.
  package mutating func pathChanged(from previous: PathStatus?, to status: PathStatus)
    -> [Action]
  {
    path = status
    guard let previous, previous != status else { return [] }
    failedReplays = 0
    return disarm()
  }

  /// The path a run loop heard is published: a usable path after another status asks for a
  /// pass (after the path is shown, so the pass's states carry it).
  package mutating func pathPublished(from previous: PathStatus?, to status: PathStatus)
    -> [Action]
  {
    guard status == .satisfied, let previous, previous != .satisfied else { return [] }
    requested &+= 1
    return wake()
  }

  /// A caller waits until every backoff sleep a dropped retry cut short has ended (at once when
  /// none is ending), so that what it does next (publishing the path, returning from a pass)
  /// comes after the sleep, as if it were cancelled synchronously.
  package mutating func sleepEndRequested(_ waiter: Waiter) -> [Action] {
    guard !cutShort.isEmpty else { return [.resume([waiter])] }
    cutShortWaiters.append(waiter)
    return []
  }

  /// A reader started a refresh.
  package mutating func refreshStarted() -> [Action] {
    refreshes += 1
    return [.publishActivity]
  }

  /// A reader's refresh ended.
  package mutating func refreshEnded() -> [Action] {
    refreshes = max(0, refreshes - 1)
    return [.publishActivity]
  }

  // MARK: - Run loops

  /// A run loop starts: a pass a transient failure stopped before any loop ran (the first pass
  /// of `sync --watch`) arms its retry, unless the path is known to be down.
  package mutating func watchStarted(jitter: () -> Double) -> [Action] {
    watchers += 1
    guard let stop = lastTransientStop, retry == .none, !passRunning, Self.isUsable(path) else {
      return []
    }
    return arm(after: stop, jitter: jitter)
  }

  /// A run loop ended; the last one drops the armed retry.
  package mutating func watchEnded() -> [Action] {
    watchers = max(0, watchers - 1)
    return watchers == 0 ? disarm() : []
  }

  /// What a run loop does now: a pass when one was asked for since the last started or the
  /// retry is due; else a wait, with the armed backoff as its timer when no other loop sleeps
  /// it and the path is usable.
  package mutating func loopNext() -> LoopStep {
    if retry == .due || requested != served {
      if retry == .due { retry = .none }
      return .pass
    }
    nextWaitID &+= 1
    var timer: Duration?
    if case .armed(let delay) = retry, Self.isUsable(path) {
      retry = .sleeping(delay, wait: nextWaitID)
      timer = delay
    }
    return .wait(LoopWait(id: nextWaitID, epoch: epoch, timer: timer))
  }

  /// The loop's waiter for `wait`: resumed at once when an event came since the wait was
  /// decided or the loop is cancelled, else kept until the next wake-up.
  package mutating func loopWaits(_ wait: LoopWait, waiter: Waiter, cancelled: Bool)
    -> [Action]
  {
    guard !cancelled, epoch == wait.epoch else { return [.resume([waiter])] }
    loopWaiters[wait.id] = waiter
    return []
  }

  /// The loop waiting `wait` was cancelled: its waiter resumes.
  package mutating func loopWaitCancelled(_ wait: LoopWait) -> [Action] {
    guard let waiter = loopWaiters.removeValue(forKey: wait.id) else { return [] }
    return [.resume([waiter])]
  }

  /// The timer of `wait` ran out: the retry is due (unless it was dropped meanwhile).
  package mutating func timerFired(_ wait: LoopWait) -> [Action] {
    guard case .sleeping(_, wait.id) = retry else { return [] }
    retry = .due
    return wake()
  }

  /// The wait ended. A retry its timer was sleeping is armed again (the loop was woken for
  /// something else, or it ends), and the other loops are woken so one of them sleeps it.
  package mutating func loopWaitEnded(_ wait: LoopWait) -> [Action] {
    loopWaiters[wait.id] = nil
    var actions: [Action] = []
    if cutShort.remove(wait.id) != nil, cutShort.isEmpty, !cutShortWaiters.isEmpty {
      actions.append(.resume(cutShortWaiters))
      cutShortWaiters = []
    }
    guard case .sleeping(let delay, wait.id) = retry else { return actions }
    retry = .armed(delay)
    return actions + wake()
  }
}

extension ReplayMachine.Action: Equatable where Waiter: Equatable {}
extension ReplayMachine.Action: Sendable where Waiter: Sendable {}
extension ReplayMachine: Sendable where Waiter: Sendable {}
