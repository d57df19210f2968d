import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

/// What the replayer logs and records itself (decisions 2203 and 2301): every pass, its run
/// loop's included, and each delivery's lag, into swift-log's `InMemoryLogHandler` and
/// swift-metrics' `TestMetrics`; passes timed on a manual clock, lags on a fixed wall clock.
@Suite("OutboxReplayer logs and metrics", .timeLimit(.minutes(1)))
struct OutboxReplayerObservationTests {
  let store = InMemoryLocalStore()
  let clock = ManualClock()
  let metrics = TestMetrics()
  static let committed = Date(timeIntervalSince1970: 1_700_000_000)

  /// A replayer whose `uploads` go to `sender`, whose wall clock reads 3 s after the one entry
  /// it holds was committed; every backoff draw is 0.5.
  func replayer(_ sender: ScriptedSender, logger: Logger) throws -> OutboxReplayer {
    let replayer = OutboxReplayer(
      store: store, now: { Self.committed + 3 }, clock: clock, random: FixedRandomSource(0.5),
      logger: logger, metrics: metrics)
    OutboxReplayerTests.registerUploads(sender, on: replayer)
    try store.enqueue(
      OutboxOperation(
        key: RecordKey(collection: "uploads", id: "u1"), kind: .create,
        payload: .object([:]), baseVersion: nil, enqueuedAt: Self.committed))
    return replayer
  }

  @Test("the run loop's passes are logged and timed; a transient stop says the loop's next wait")
  func runLoopPasses() async throws {
    let (logger, log) = Logger.recording(level: .debug)
    let sender = ScriptedSender(
      log: SendLog(), answers: [.failed(CourierError(.overloaded, status: 503)), .delivered(nil)])
    let replayer = try replayer(sender, logger: logger)
    let loop = Task { await replayer.run(replayingFirst: true) }
    defer { loop.cancel() }
    await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(1500))
    for await state in replayer.states() where state.pendingCount == 0 && !state.isSyncing {
      break
    }
    let passes = log.entries.filter { $0.text.hasPrefix("Replay pass") }
    #expect(
      passes.map(\.text) == [
        "Replay pass stopped by a transient failure", "Replay pass ended",
      ])
    #expect(passes.allSatisfy { $0.level == .debug })
    #expect(passes.first?.value(CourierLogKey.errorKind) == "overloaded")
    #expect(passes.first?.value(CourierLogKey.retryDelay) == "1.500")
    #expect(passes.first?.value(CourierLogKey.replayPending) == "1")
    #expect(passes.last?.value(CourierLogKey.replaySent) == "1")
    #expect(passes.last?.value(CourierLogKey.replayPending) == "0")
    #expect(passes.last?.value(CourierLogKey.retryDelay) == nil)
    // Both passes, timed on the manual clock, which did not move while either ran.
    #expect(try metrics.expectTimer("courier_replay_duration_seconds").values == [0, 0])
    // The one delivery: its commit to the wall clock's reading, 3 s.
    #expect(try metrics.expectTimer("courier_replay_lag_seconds").values == [3_000_000_000])
    loop.cancel()
    await loop.value
  }

  @Test("a pass a 401 stopped says so, with its kind and no wait; nothing delivered, no lag")
  func stoppedPass() async throws {
    let (logger, log) = Logger.recording(level: .debug)
    let sender = ScriptedSender(log: SendLog(), answers: [.failed(CourierError(.unauthorized))])
    let replayer = try replayer(sender, logger: logger)
    let report = await replayer.replay()
    #expect(report.stoppedBy?.kind == .unauthorized)
    let pass = try #require(log.entries.last)
    #expect(pass.text == "Replay pass stopped")
    #expect(pass.value(CourierLogKey.errorKind) == "unauthorized")
    #expect(pass.value(CourierLogKey.retryDelay) == nil)
    #expect(try metrics.expectTimer("courier_replay_duration_seconds").values.count == 1)
    #expect(throws: (any Error).self) { try metrics.expectTimer("courier_replay_lag_seconds") }
  }

  @Test("a logger above debug gets nothing from a pass")
  func quietLogger() async throws {
    let (logger, log) = Logger.recording(level: .info)
    let replayer = try replayer(ScriptedSender(log: SendLog()), logger: logger)
    _ = await replayer.replay()
    #expect(log.entries.isEmpty)
    #expect(try metrics.expectTimer("courier_replay_duration_seconds").values.count == 1)
  }
}
