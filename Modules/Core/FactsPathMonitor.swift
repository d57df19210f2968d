import CourierDomain
import CourierPorts
import Synchronization

/// A path monitor's paths with what the OS's network service and the configuration add
/// (`PathFactsMerge`): metered links, a captive portal NetworkManager found, the constrained
/// rule, each fact with its source (decision 2601).
///
/// A decorator, like `ConnectivityModel`: it runs the monitor and the facts source together and
/// publishes the merge of the latest of each. The merged path keeps the monitor's generation,
/// so the generation rule holds: a stale monitor event is ignored by the broadcaster, and a
/// facts callback from an earlier run is dropped here.
package final class FactsPathMonitor: PathMonitor {
  private struct State {
    var path = NetworkPath.unknown
    var facts: OSPathFacts
    var run: UInt64 = 0
  }

  private let monitor: any PathMonitor
  private let source: (any PathFactsSource)?
  private let rule: ConstrainedRule
  private let broadcaster = PathBroadcaster()
  private let state: Mutex<State>

  /// Creates the decorator.
  /// - Parameters:
  ///   - monitor: the monitor of links and routes (netlink).
  ///   - source: the OS's network service, or nil when the configuration turned it off.
  ///   - rule: which links count as constrained.
  package init(monitor: any PathMonitor, source: (any PathFactsSource)?, rule: ConstrainedRule) {
    self.monitor = monitor
    self.source = source
    self.rule = rule
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
    let token = state.withLock { state -> UInt64 in
      state.run += 1
      state.facts = .off
      return state.run
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await self.monitor.run() }
      group.addTask {
        for await path in self.monitor.updates() { self.update(token) { $0.path = path } }
      }
      if let source {
        group.addTask {
          await source.run { facts in self.update(token) { $0.facts = facts } }
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

  /// Applies a change from the run `token` and publishes the merge; a change from an earlier
  /// run changes nothing.
  private func update(_ token: UInt64, _ change: (inout State) -> Void) {
    state.withLock { state in
      guard state.run == token else { return }
      change(&state)
      broadcaster.relay(PathFactsMerge.merge(state.path, with: state.facts, rule: rule))
    }
  }
}
