import CourierDomain
import CourierPorts
import Synchronization

/// A path monitor's paths with what the OS's network service and the configuration add
/// (`PathFactsMerge`): metered links, a captive portal NetworkManager found, the constrained
/// rule, each fact with its source (decision 2601).
///
/// A decorator, like `ConnectivityModel`: it runs the monitor and the facts source together and
/// publishes the merge of the latest of each, from the source's first answer on (or after
/// `factsWait`): a follower never sees netlink's path without the OS's facts, which would be
/// "not metered" for an instant (decision 2609). The merged path keeps the monitor's generation,
/// so the generation rule holds: a stale monitor event is ignored by the broadcaster, and a
/// facts callback from an earlier run is dropped here.
package final class FactsPathMonitor: PathMonitor {
  private struct State {
    var path = NetworkPath.unknown
    var facts: OSPathFacts
    var run: UInt64 = 0
    /// Whether this run may publish: once the source has answered (or ``factsWait`` passed),
    /// so that no follower sees netlink's path without the OS's facts first (decision 2609).
    var publishing = true
  }

  private let monitor: any PathMonitor
  private let source: (any PathFactsSource)?
  private let rule: ConstrainedRule
  private let factsWait: Duration
  private let broadcaster = PathBroadcaster()
  private let state: Mutex<State>

  /// Creates the decorator.
  /// - Parameters:
  ///   - monitor: the monitor of links and routes (netlink).
  ///   - source: the OS's network service, or nil when the configuration turned it off.
  ///   - rule: which links count as constrained.
  ///   - factsWait: how long a run holds netlink's path back waiting for the source's first
  ///     answer (a wedged bus must not hide the path for ever).
  package init(
    monitor: any PathMonitor, source: (any PathFactsSource)?, rule: ConstrainedRule,
    factsWait: Duration = .seconds(1)
  ) {
    self.monitor = monitor
    self.source = source
    self.rule = rule
    self.factsWait = factsWait
    state = Mutex(State(facts: .off))
  }

  /// A new stream: the current merged path first, then every change.
  /// - Returns: the stream.
  package func updates() -> AsyncStream<NetworkPath> { broadcaster.updates() }

  /// The latest merged path.
  package var currentPath: NetworkPath { broadcaster.current }

  /// Runs the monitor and the facts source until the calling task is cancelled.
  /// - Throws: what the monitor's `run()` throws when it cannot start.
  package func run() async throws {
    let source = source
    let token = state.withLock { state -> UInt64 in
      state.run += 1
      state.facts = .off
      state.publishing = source == nil
      return state.run
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await self.monitor.run() }
      group.addTask {
        for await path in self.monitor.updates() {
          self.update(token) {
            $0.path = path
            return true
          }
        }
      }
      if let source {
        group.addTask {
          await source.run { facts in
            self.update(token) {
              $0.facts = facts
              $0.publishing = true
              return true
            }
          }
        }
        // The bound on the wait for the first facts: after it, netlink's path goes out alone.
        let wait = factsWait
        group.addTask {
          do { try await Task.sleep(for: wait) } catch { return }
          self.update(token) { state in
            if state.publishing { return false }
            state.publishing = true
            return true
          }
        }
      }
      defer { group.cancelAll() }
      while try await group.next() != nil {}
    }
  }

  /// The monitor's snapshot merged with the facts source's.
  /// - Returns: the path.
  package func snapshot() async -> NetworkPath {
    async let facts = source?.snapshot()
    let path = await monitor.snapshot()
    return PathFactsMerge.merge(path, with: await facts ?? .off, rule: rule)
  }

  /// Applies a change from the run `token` and publishes the merge (when `change` says there
  /// is news and the run publishes); a change from an earlier run changes nothing.
  private func update(_ token: UInt64, _ change: (inout State) -> Bool) {
    state.withLock { state in
      guard state.run == token else { return }
      guard change(&state), state.publishing else { return }
      broadcaster.relay(PathFactsMerge.merge(state.path, with: state.facts, rule: rule))
    }
  }
}
