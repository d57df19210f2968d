import CourierCore
import CourierDomain
import CourierTestKit
import Testing

@Suite("ConnectivityModel", .timeLimit(.minutes(1)))
struct ConnectivityModelTests {
  let delays = PathDebounceDelays(online: .milliseconds(300), offline: .seconds(2))

  /// Runs the model over a manual monitor and clock for the body, then stops it.
  func withModel(
    _ body: (ConnectivityModel, ManualPathMonitor, ManualClock) async throws -> Void
  ) async throws {
    let monitor = ManualPathMonitor()
    let clock = ManualClock()
    let model = ConnectivityModel(monitor: monitor, clock: clock, delays: delays)
    let task = Task { try await model.run() }
    defer { task.cancel() }
    // The model's own subscription yields monitor's current path (unknown) first.
    await model.waitForReceived(1)
    try await body(model, monitor, clock)
    task.cancel()
    try await task.value
    #expect(monitor.runCount.active == 0)
  }

  @Test("the first path passes at once; a short flap never reaches subscribers")
  func flapHidden() async throws {
    try await withModel { model, monitor, clock in
      var updates = model.updates().makeAsyncIterator()
      #expect(await updates.next()?.status == .unknown)
      monitor.send(.satisfied)
      #expect(await updates.next()?.status == .satisfied)
      monitor.send(.unsatisfied)
      await clock.waitForSleepers(1)
      #expect(model.pendingPath?.status == .unsatisfied)
      clock.advance(by: .milliseconds(1900))
      monitor.send(.satisfied)
      await model.waitForReceived(4)
      #expect(clock.sleeperCount == 0)
      clock.advance(by: .seconds(5))
      #expect(model.currentPath.status == .satisfied)
      monitor.send(.satisfied, expensive: true)
      await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(300))
      let next = await updates.next()
      #expect(next?.status == .satisfied && next?.isExpensive == true)
    }
  }

  @Test("offline is published after the long delay, online after the short one")
  func delays() async throws {
    try await withModel { model, monitor, clock in
      var updates = model.updates().makeAsyncIterator()
      _ = await updates.next()
      monitor.send(.satisfied)
      #expect(await updates.next()?.status == .satisfied)
      monitor.send(.unsatisfied)
      await clock.waitForSleepers(1)
      #expect(clock.sleepLog.last == .seconds(2))
      clock.advance(by: .seconds(2))
      #expect(await updates.next()?.status == .unsatisfied)
      monitor.send(.satisfied)
      await clock.waitForSleepers(1)
      #expect(clock.sleepLog.last == .milliseconds(300))
      clock.advance(by: .milliseconds(300))
      #expect(await updates.next()?.status == .satisfied)
    }
  }

  @Test("several subscribers each get every change")
  func severalSubscribers() async throws {
    try await withModel { model, monitor, clock in
      var first = model.updates().makeAsyncIterator()
      var second = model.updates().makeAsyncIterator()
      _ = await first.next()
      _ = await second.next()
      monitor.send(.unsatisfied)
      #expect(await first.next()?.status == .unsatisfied)
      #expect(await second.next()?.status == .unsatisfied)
      monitor.send(.satisfied)
      await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(300))
      #expect(await first.next()?.status == .satisfied)
      #expect(await second.next()?.status == .satisfied)
    }
  }

  @Test("a monitor restart's stale events never pass through")
  func restartStale() async throws {
    try await withModel { model, monitor, clock in
      var updates = model.updates().makeAsyncIterator()
      _ = await updates.next()
      monitor.send(.satisfied)
      #expect(await updates.next()?.status == .satisfied)
      let old = monitor.generation
      monitor.restart()
      #expect(!monitor.send(NetworkPath(status: .unsatisfied, generation: old)))
      monitor.send(.satisfied, expensive: true)
      await clock.waitForSleepers(1)
      clock.advance(by: .seconds(2))
      let next = await updates.next()
      #expect(next?.status == .satisfied && next?.isExpensive == true)
      #expect(next?.generation == old + 1)
    }
  }
}
