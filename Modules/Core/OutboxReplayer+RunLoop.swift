import CourierDomain
import CourierPorts

extension OutboxReplayer {
  /// The run loop, until cancelled: follows the path monitor (publishing online and offline),
  /// and runs a pass whenever a write asks for one (``requestReplay()``), the path becomes usable
  /// after another status, or the `ReplayBackoff` wait after a pass a transient failure stopped
  /// ends (equal jitter, growing with each consecutive failed pass, `Retry-After` as a floor; a
  /// pass that ends otherwise, or a path change, resets it; no wait runs while the path is known
  /// to be down). Every pass runs in this call's task: cancelling it ends the loop, its wait and
  /// its pass at once. Several calls may run at once (each counts as watching); passes still
  /// never interleave. Does not run the monitor itself (the caller runs `pathMonitor.run()`).
  /// - Parameter replayingFirst: whether to send the outbox once as it starts (unless the path
  ///   is known to be down), after it counts as watching: a write made at any moment is then
  ///   either in that pass or asks for its own, with no window between the two.
  package func run(replayingFirst: Bool = false) async {
    event { $0.watchStarted(jitter: { random.next() }) }
    defer { event { $0.watchEnded() } }
    let status = pathMonitor?.currentPath.status ?? .unknown
    if replayingFirst, Machine.isUsable(status) { _ = await replay() }
    let monitor = pathMonitor
    await withTaskGroup(of: Void.self) { group in
      if let monitor { group.addTask { await self.follow(monitor) } }
      group.addTask { await self.serve() }
      // The path's stream ending ends the loop, as cancellation does.
      _ = await group.next()
      group.cancelAll()
    }
  }

  /// Follows the path: a change resets the backoff (a sleep it cuts short ends before the path
  /// is shown), the path is published, and its return asks for a pass.
  private func follow(_ monitor: any PathMonitor) async {
    var previous: NetworkPath?
    for await path in monitor.updates() {
      event { $0.pathChanged(from: previous?.status, to: path.status) }
      await sleepCutShort()
      publisher.update { $0.path = path.status }
      event { $0.pathPublished(from: previous?.status, to: path.status) }
      // A path that stops being metered or saving data may free entries the policy held
      // (decision 2610): a pass, as a write would ask for.
      if let previous, previous.status == path.status,
        previous.isExpensive != path.isExpensive || previous.isConstrained != path.isConstrained
      {
        event { $0.writeCommitted(path: path.status) }
      }
      previous = path
    }
  }

  /// Returns once every backoff sleep a dropped retry cut short has ended.
  func sleepCutShort() async {
    await withCheckedContinuation { ended in event { $0.sleepEndRequested(ended) } }
  }

  /// Runs the passes the machine asks for, and waits between them, until cancelled.
  private func serve() async {
    while !Task.isCancelled {
      switch shared.withLock({ $0.machine.loopNext() }) {
      case .pass: _ = await replay()
      case .wait(let wait): await sleep(wait)
      }
    }
  }

  /// Waits until the machine wakes the loop, and, when the wait has a timer, for the backoff
  /// on the clock. Both are children of one task group: whichever ends first cancels the other,
  /// so a wake-up (a path change drops the retry and wakes the loop) or the loop's cancellation
  /// ends the sleep at once.
  private func sleep(_ wait: Machine.LoopWait) async {
    let fired = await withTaskGroup(of: Bool.self) { group in
      if let delay = wait.timer {
        group.addTask { [clock] in
          do {
            try await clock.sleep(for: delay)
            return true
          } catch {
            return false
          }
        }
      }
      group.addTask {
        await self.woken(wait)
        return false
      }
      var fired = false
      for await ended in group {
        fired = fired || ended
        group.cancelAll()
      }
      return fired
    }
    event { machine in (fired ? machine.timerFired(wait) : []) + machine.loopWaitEnded(wait) }
  }

  /// Returns when the machine wakes the loop after `wait` was decided, or when cancelled.
  private func woken(_ wait: Machine.LoopWait) async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
        // Read under the lock: a cancellation is either seen here or finds the waiter kept.
        event { $0.loopWaits(wait, waiter: waiter, cancelled: Task.isCancelled) }
      }
    } onCancel: {
      event { $0.loopWaitCancelled(wait) }
    }
  }
}
