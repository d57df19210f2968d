import CourierDomain
import CourierPorts
import Synchronization

/// The application's connectivity, as use cases should read it: a path monitor's events with
/// flapping smoothed out by `PathDebouncer` on an injected clock (decision record 0201).
///
/// It is itself a `PathMonitor` (a decorator), so a use case takes `any PathMonitor` and does
/// not know whether it is debounced. Like the path it smooths, it is a hint, never a gate.
package final class ConnectivityModel: PathMonitor {
  private let monitor: any PathMonitor
  private let clock: any Clock<Duration>
  private let runsMonitor: Bool
  private let broadcaster = PathBroadcaster()
  // The debouncer and the publication share one lock so two timers can never publish out of
  // order.
  private let debouncer: Mutex<PathDebouncer>
  private let timer = Mutex<Task<Void, Never>?>(nil)
  private let received = Mutex(
    (count: 0, waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)]()))

  /// Creates the model.
  /// - Parameters:
  ///   - monitor: the monitor to smooth.
  ///   - clock: the clock the delays are measured on.
  ///   - delays: how long a new path must hold before it is published.
  ///   - runsMonitor: whether `run()` also runs `monitor` (false when something else runs it).
  package init(
    monitor: any PathMonitor, clock: any Clock<Duration>,
    delays: PathDebounceDelays = .standard, runsMonitor: Bool = true
  ) {
    self.monitor = monitor
    self.clock = clock
    self.runsMonitor = runsMonitor
    self.debouncer = Mutex(PathDebouncer(delays: delays))
  }

  /// A new stream: the current smoothed path first, then every change, newest only for a slow
  /// consumer.
  /// - Returns: the stream.
  package func updates() -> AsyncStream<NetworkPath> { broadcaster.updates() }

  /// The latest smoothed path (`unknown` before the monitor said anything).
  package var currentPath: NetworkPath { broadcaster.current }

  /// The path waiting for its delay to pass, if any.
  package var pendingPath: NetworkPath? { debouncer.withLock { $0.pending } }

  /// Runs the monitor (unless told not to) and smooths its events until the calling task is
  /// cancelled, then returns.
  /// - Throws: what the monitor's `run()` throws when it cannot start.
  package func run() async throws {
    defer { timer.withLock { $0?.cancel() } }
    try await withThrowingTaskGroup(of: Void.self) { group in
      if runsMonitor { group.addTask { try await self.monitor.run() } }
      group.addTask { await self.consume() }
      defer { group.cancelAll() }
      while try await group.next() != nil {}
    }
  }

  /// Suspends until the model has handled at least `count` events from the monitor: the
  /// synchronisation point for a test driving it with a manual clock.
  /// - Parameter count: how many events.
  package func waitForReceived(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = received.withLock { state -> Bool in
        if state.count >= count { return true }
        state.waiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private func consume() async {
    for await path in monitor.updates() {
      handle(path)
      let ready = received.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.count += 1
        let count = state.count
        let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
        state.waiters.removeAll { $0.count <= count }
        return ready
      }
      ready.forEach { $0.resume() }
    }
  }

  private func fire(_ token: UInt64) {
    debouncer.withLock { debouncer in
      if let path = debouncer.fire(token) { broadcaster.relay(path) }
    }
  }

  private func handle(_ path: NetworkPath) {
    let action = debouncer.withLock { debouncer -> PathDebounceAction in
      let action = debouncer.receive(path)
      if case .publish(let path) = action { broadcaster.relay(path) }
      return action
    }
    switch action {
    case .none, .publish:
      break
    case .cancelTimer:
      timer.withLock {
        $0?.cancel()
        $0 = nil
      }
    case .startTimer(let token, let delay):
      let task = Task { [self] in
        do { try await clock.sleep(for: delay) } catch { return }
        fire(token)
      }
      timer.withLock {
        $0?.cancel()
        $0 = task
      }
    }
  }
}
