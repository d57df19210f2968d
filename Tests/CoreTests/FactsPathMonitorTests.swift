import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Synchronization
import Testing

/// The netlink path and the OS's facts merged by `FactsPathMonitor` (decision 2601): each
/// run's facts land, an earlier run's never do.
@Suite("FactsPathMonitor", .timeLimit(.minutes(1)))
struct FactsPathMonitorTests {
  /// A facts source the test publishes through, keeping each run's callback.
  final class ScriptedFacts: PathFactsSource {
    let publishers = Mutex<[@Sendable (OSPathFacts) -> Void]>([])

    func snapshot() async -> OSPathFacts { OSPathFacts(service: .noService) }

    func run(publish: @escaping @Sendable (OSPathFacts) -> Void) async {
      publishers.withLock { $0.append(publish) }
      let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
      await withTaskCancellationHandler {
        for await _ in stream {}
      } onCancel: {
        continuation.finish()
      }
    }

    /// Waits (a poll with a deadline) until `count` runs have subscribed.
    func runs(_ count: Int) async throws -> [@Sendable (OSPathFacts) -> Void] {
      let deadline = ContinuousClock.now + .seconds(20)
      while ContinuousClock.now < deadline {
        let publishers = publishers.withLock { $0 }
        if publishers.count >= count { return publishers }
        try await Task.sleep(for: .milliseconds(1))
      }
      throw CancellationError()
    }
  }

  static func until(
    _ monitor: FactsPathMonitor, _ condition: (NetworkPath) -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition(monitor.currentPath) {
      try #require(ContinuousClock.now < deadline, "\(monitor.currentPath)")
      try await Task.sleep(for: .milliseconds(1))
    }
  }

  @Test("facts merge with the monitor's path; a callback from an earlier run never lands")
  func staleRunIgnored() async throws {
    let netlink = ManualPathMonitor()
    let facts = ScriptedFacts()
    let monitor = FactsPathMonitor(monitor: netlink, source: facts, rule: ConstrainedRule())
    let first = Task { try await monitor.run() }
    let firstPublish = try await facts.runs(1)[0]
    firstPublish(OSPathFacts(service: .networkManager, metered: .yes, connectivity: .full))
    netlink.send(.satisfied)
    try await Self.until(monitor) { $0.status == .satisfied }
    #expect(monitor.currentPath.isExpensive)
    #expect(monitor.currentPath.sources.expensive == .networkManager)
    first.cancel()
    try await first.value

    let second = Task { try await monitor.run() }
    let secondPublish = try await facts.runs(2)[1]
    secondPublish(OSPathFacts(service: .networkManager, metered: .guessNo, connectivity: .portal))
    #expect(monitor.currentPath.status == .captivePortal)
    #expect(monitor.currentPath.isExpensive == false)
    firstPublish(OSPathFacts(service: .networkManager, metered: .yes, connectivity: .full))
    #expect(monitor.currentPath.status == .captivePortal, "the first run's callback is stale")
    #expect(monitor.currentPath.isExpensive == false)
    // The service vanishing: netlink's facts stand again.
    secondPublish(OSPathFacts(service: .noService))
    #expect(monitor.currentPath.status == .satisfied)
    #expect(monitor.currentPath.sources.os.service == .noService)
    second.cancel()
    try await second.value
  }

  @Test(
    "netlink's path is held back until the OS's facts answer: the first path a follower sees is already metered (decision 2609)"
  )
  func heldUntilFacts() async throws {
    let netlink = ManualPathMonitor()
    let facts = ScriptedFacts()
    let monitor = FactsPathMonitor(
      monitor: netlink, source: facts, rule: ConstrainedRule(), factsWait: .seconds(60))
    let updates = monitor.updates()
    let running = Task { try await monitor.run() }
    defer { running.cancel() }
    let publish = try await facts.runs(1)[0]
    netlink.send(.satisfied)
    // Netlink's path has reached the decorator (its subscriber) or will: either way nothing
    // may go out before the facts.
    let first = Task { () -> NetworkPath? in
      for await path in updates where path.status != .unknown { return path }
      return nil
    }
    publish(OSPathFacts(service: .networkManager, metered: .yes, connectivity: .full))
    let seen = try #require(await first.value)
    #expect(seen.status == .satisfied && seen.isExpensive, "\(seen)")
  }

  @Test("a source that never answers holds netlink's path back for factsWait only")
  func factsWaitBounded() async throws {
    let netlink = ManualPathMonitor()
    let monitor = FactsPathMonitor(
      monitor: netlink, source: ScriptedFacts(), rule: ConstrainedRule(),
      factsWait: .milliseconds(50))
    let running = Task { try await monitor.run() }
    defer { running.cancel() }
    netlink.send(.satisfied)
    try await Self.until(monitor) { $0.status == .satisfied }
    #expect(monitor.currentPath.sources.os.service == .off)
  }

  @Test("snapshot merges the monitor's snapshot with the source's")
  func snapshot() async {
    let netlink = ManualPathMonitor()
    netlink.send(.satisfied)
    let monitor = FactsPathMonitor(
      monitor: netlink, source: ScriptedFacts(), rule: ConstrainedRule())
    let path = await monitor.snapshot()
    #expect(path.status == .satisfied)
    #expect(path.sources.os.service == .noService)
    #expect(path.sources.status == .netlink)
  }
}
