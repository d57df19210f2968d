import CourierDomain
import CourierPorts
import Synchronization

/// A path monitor over another that adds what Courier's own captive-portal probe finds
/// (decision 2612): each time the monitor reports a usable path, the probe checks it; while a
/// portal holds it, the path is published as `captivePortal` and checked again every
/// `recheck`, until it answers as the server should (the portal "opens") or the path changes.
/// A reply that is not the server's asks for a check at once (``recheck()``). The probe only
/// changes what is published: no request waits for it.
package final class PortalProbingMonitor: PathMonitor {
  private struct State {
    /// The monitor's latest path.
    var path: NetworkPath?
    /// Whether the last conclusive check of this path found a portal.
    var portal = false
    /// The login page the portal named, when it did.
    var userPortalURL: String?
  }

  private let monitor: any PathMonitor
  private let probe: PortalProbe
  private let clock: any Clock<Duration>
  private let recheckEvery: Duration
  private let broadcaster = PathBroadcaster()
  private let state = Mutex(State())
  private let checking = Mutex<Task<Void, Never>?>(nil)

  /// Creates the monitor.
  /// - Parameters:
  ///   - monitor: the monitor it follows (and runs).
  ///   - probe: the check.
  ///   - clock: the clock the checks are spaced on while a portal holds the path.
  ///   - recheck: how long between checks while a portal holds the path.
  package init(
    monitor: any PathMonitor, probe: PortalProbe, clock: any Clock<Duration>,
    recheck: Duration
  ) {
    self.monitor = monitor
    self.probe = probe
    self.clock = clock
    self.recheckEvery = recheck
  }

  /// The current path first, then every change, the probe's conclusions included.
  /// - Returns: the stream.
  package func updates() -> AsyncStream<NetworkPath> { broadcaster.updates() }

  /// The monitor's current path as the last check leaves it.
  package var currentPath: NetworkPath {
    let portal = state.withLock { $0.portal }
    return PortalCheck.path(monitor.currentPath, portal: portal)
  }

  /// The login page the portal named, while one holds the path.
  package var userPortalURL: String? { state.withLock { $0.portal ? $0.userPortalURL : nil } }

  /// The monitor's snapshot as the last check leaves it.
  /// - Returns: the path.
  package func snapshot() async -> NetworkPath {
    let path = await monitor.snapshot()
    return PortalCheck.path(path, portal: state.withLock { $0.portal })
  }

  /// Runs the monitor and follows it, checking each usable path, until cancelled.
  package func run() async throws {
    defer { checking.withLock { $0?.cancel() } }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await self.monitor.run() }
      group.addTask {
        for await path in self.monitor.updates() { self.follow(path) }
      }
      defer { group.cancelAll() }
      while try await group.next() != nil {}
    }
  }

  /// Checks the path now (a reply was not the server's), and publishes what it finds.
  /// - Returns: what the check concluded.
  @discardableResult
  package func recheck() async -> PortalCheck {
    let path = state.withLock { $0.path } ?? monitor.currentPath
    let verdict = await probe.check(advertised: PortalProbe.advertised(on: path))
    apply(verdict)
    return verdict
  }

  private func follow(_ path: NetworkPath) {
    let portal = state.withLock { state -> Bool in
      state.path = path
      // A path that went down forgets its portal: the next usable one is checked afresh.
      if path.status != .satisfied, path.status != .unknown { state.portal = false }
      return state.portal
    }
    broadcaster.relay(PortalCheck.path(path, portal: portal))
    let task: Task<Void, Never>? =
      path.status == .satisfied
      ? Task { [self] in
        while !Task.isCancelled {
          let verdict = await probe.check(advertised: PortalProbe.advertised(on: path))
          if Task.isCancelled { return }
          apply(verdict)
          guard state.withLock({ $0.portal }) else { return }
          do { try await clock.sleep(for: recheckEvery) } catch { return }
        }
      } : nil
    checking.withLock {
      $0?.cancel()
      $0 = task
    }
  }

  private func apply(_ verdict: PortalCheck) {
    state.withLock { state in
      let before = state.portal
      switch verdict {
      case .open:
        state.portal = false
        state.userPortalURL = nil
      case .portal(let page):
        state.portal = true
        state.userPortalURL = page
      case .unknown:
        return
      }
      // Only a verdict that changes the path is published: a path that stays as it was is no
      // change for a follower (a replayer takes every update as the path changing).
      guard state.portal != before else { return }
      let path = state.path ?? monitor.currentPath
      broadcaster.relay(PortalCheck.path(path, portal: state.portal))
    }
  }
}
