import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Testing

/// The run loop's backoff sleep as the shell carries it out (decision 2301): a child of the
/// loop's task group, ended by the machine's wake-ups, on a manual clock.
@Suite("OutboxReplayer run loop", .timeLimit(.minutes(1)))
struct OutboxReplayerRunLoopTests {
  let store = InMemoryLocalStore()
  let clock = ManualClock()
  let log = SendLog()

  static let outage = ReplayAnswer.failed(CourierError(.overloaded, status: 503))

  /// A replayer whose `uploads` go to `sender`; every backoff draw is 0.5.
  func replayer(_ sender: ScriptedSender, monitor: ManualPathMonitor? = nil) throws
    -> OutboxReplayer
  {
    let replayer = OutboxReplayer(
      store: store, pathMonitor: monitor, clock: clock, random: FixedRandomSource(0.5))
    OutboxReplayerTests.registerUploads(sender, on: replayer)
    try store.enqueue(
      OutboxOperation(
        key: RecordKey(collection: "uploads", id: "u1"), kind: .create,
        payload: .object([:]), baseVersion: nil, enqueuedAt: Date()))
    return replayer
  }

  @Test("a pass whose failure re-arms the backoff returns after the sleep it replaced ended")
  func passEndsTheSleepItReplaces() async throws {
    let sender = ScriptedSender(log: log, answers: [Self.outage, Self.outage, .delivered(nil)])
    let replayer = try replayer(sender)
    let loop = Task { await replayer.run(replayingFirst: true) }
    defer { loop.cancel() }
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500)])
    let report = await replayer.replay()
    #expect(report.stoppedBy?.status == 503)
    // The 1.5 s sleep is over: at most the new one (3 s, the second failure's) is pending.
    #expect(clock.sleeperCount == clock.sleepLog.count - 1)
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3)] && clock.sleeperCount == 1)
    clock.advance(by: .seconds(3))
    for await state in replayer.states() where state.pendingCount == 0 && !state.isSyncing {
      break
    }
    #expect(sender.sent.count == 3 && clock.sleeperCount == 0)
  }

  @Test("one loop sleeps the backoff; when that loop ends, another running loop takes it over")
  func anotherLoopTakesTheSleepOver() async throws {
    let sender = ScriptedSender(log: log, answers: [Self.outage, .delivered(nil)])
    let monitor = ManualPathMonitor()
    let replayer = try replayer(sender, monitor: monitor)
    let first = Task { await replayer.run(replayingFirst: true) }
    await clock.waitForSleepers(1)
    let second = Task { await replayer.run() }
    defer { second.cancel() }
    // The second loop follows the path once it counts as watching.
    let deadline = ContinuousClock.now + .seconds(30)
    while monitor.subscriberCount < 2 {
      try #require(ContinuousClock.now < deadline, "the second loop never started")
      await Task.yield()
    }
    // The first loop sleeps the 1.5 s; the second waits without a timer of its own.
    #expect(clock.sleepLog == [.milliseconds(1500)])
    first.cancel()
    await first.value
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .milliseconds(1500)])
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .milliseconds(1500))
    for await state in replayer.states() where state.pendingCount == 0 && !state.isSyncing {
      break
    }
    #expect(sender.sent.count == 2 && clock.sleeperCount == 0)
    second.cancel()
    await second.value
    #expect(clock.sleeperCount == 0)
  }
}
