import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// `watch()` replays again after a replay a transient failure stopped (decision 0413): waits on
/// a manual clock, draws from a fixed random source; no real sleeping.
@Suite("SyncEngine watch retries", .timeLimit(.minutes(1)))
struct SyncEngineWatchRetryTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()
  let clock = ManualClock()
  let monitor = ManualPathMonitor()

  /// Every draw is 0.5: the wait is three quarters of the ceiling (2 s, 4 s, 8 s… → 1.5 s, 3 s, 6 s…).
  func engine() -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    return SyncEngine<Article>(
      client: client, store: store, pathMonitor: monitor,
      configuration: .init(), clock: clock,
      random: FixedRandomSource(0.5))
  }

  func created(_ id: String) -> String {
    #"{"id":"\#(id)","title":"\#(id)","body":"","version":1,"updated_at":"2026-11-30T00:00:00Z"}"#
  }

  /// Waits until the engine is idle with this many entries pending.
  func settled(_ engine: SyncEngine<Article>, pending: Int) async {
    for await state in engine.states() where !state.isSyncing && state.pendingCount == pending {
      return
    }
  }

  @Test("a 503 outage is retried with a growing jittered wait until the queue drains")
  func retriesUntilDrained() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    try await engine.create(Article(id: "y", title: "y", body: ""))
    transport.enqueue(status: 503, json: #"{"error":"unavailable"}"#)
    let first = await engine.replay()
    #expect(first.stoppedBy?.status == 503)

    let watcher = Task { await engine.watch() }
    defer { watcher.cancel() }
    // The replay that failed before the watch began is retried: ceiling 2 s × 0.75.
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500)])

    transport.enqueue(status: 503, json: #"{"error":"unavailable"}"#)
    clock.advance(by: .milliseconds(1500))
    await clock.waitForSleepers(1)
    // Second consecutive failure: ceiling 4 s × 0.75.
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3)])

    transport.enqueue(
      status: 503, json: #"{"error":"unavailable"}"#, headerFields: [.retryAfter: "7"])
    clock.advance(by: .seconds(3))
    await clock.waitForSleepers(1)
    // Third: 8 s × 0.75 = 6 s, but the server's Retry-After of 7 s is the floor (spread: 7 s × 1.25).
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3), .milliseconds(8750)])
    #expect(transport.requests.count == 3)

    // Just before the wait ends nothing is sent; at its end the queue drains.
    clock.advance(by: .milliseconds(8749))
    #expect(transport.requests.count == 3)
    transport.enqueue(status: 201, json: created("x"))
    transport.enqueue(status: 201, json: created("y"))
    clock.advance(by: .milliseconds(1))
    await settled(engine, pending: 0)
    #expect(try store.pending().isEmpty)
    #expect(
      transport.requests.map(\.summary) == [
        "PUT /articles/x", "PUT /articles/x", "PUT /articles/x", "PUT /articles/x",
        "PUT /articles/y",
      ])
    #expect(clock.sleeperCount == 0)

    // While a watch runs a write is sent by itself, and the success reset the count: its
    // failure waits the first ceiling's half again.
    transport.enqueue(.failure(CourierError(.timedOut)))
    try await engine.create(Article(id: "z", title: "z", body: ""))
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog.last == .milliseconds(1500))
    #expect(transport.requests.last?.summary == "PUT /articles/z")
  }

  @Test("the path going down cancels the wait; its return replays at once with a fresh count")
  func pathChangeResets() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    let watcher = Task { await engine.watch() }
    defer { watcher.cancel() }
    var states = engine.states().makeAsyncIterator()
    transport.enqueue(.failure(CourierError(.cannotReachHost)))
    _ = await engine.replay()
    await clock.waitForSleepers(1)
    transport.enqueue(.failure(CourierError(.cannotReachHost)))
    clock.advance(by: .milliseconds(1500))
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3)])

    monitor.send(.unsatisfied)
    while let state = await states.next(), state.path != .unsatisfied {}
    #expect(clock.sleeperCount == 0)

    transport.enqueue(.failure(CourierError(.overloaded, status: 503)))
    monitor.send(.satisfied)
    // The replay on the path's return fails: a first failure again, not a third.
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3), .milliseconds(1500)])
    #expect(transport.requests.count == 3)

    transport.enqueue(status: 201, json: created("x"))
    clock.advance(by: .milliseconds(1500))
    await settled(engine, pending: 0)
    #expect(try store.pending().isEmpty)
  }

  @Test("a stop that is not transient (401) schedules nothing and resets the count")
  func notTransientStops() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    let watcher = Task { await engine.watch() }
    defer { watcher.cancel() }
    transport.enqueue(.failure(CourierError(.overloaded, status: 503)))
    _ = await engine.replay()
    await clock.waitForSleepers(1)

    transport.enqueue(status: 401, json: #"{"error":"unauthorized"}"#)
    clock.advance(by: .milliseconds(1500))
    for await state in engine.states() where state.lastError?.kind == .unauthorized {
      if !state.isSyncing { break }
    }
    #expect(clock.sleeperCount == 0)
    #expect(transport.requests.count == 2)

    // Logged in again, the next transient stop starts from the first ceiling.
    transport.enqueue(.failure(CourierError(.overloaded, status: 503)))
    _ = await engine.replay()
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .milliseconds(1500)])
  }

  @Test("cancelling watch() ends it at once and its scheduled retry with it")
  func cancellationEndsRetries() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    transport.enqueue(.failure(CourierError(.overloaded, status: 503)))
    _ = await engine.replay()
    let watcher = Task { await engine.watch() }
    await clock.waitForSleepers(1)
    watcher.cancel()
    await watcher.value
    #expect(clock.sleeperCount == 0)
    #expect(transport.requests.count == 1)
    #expect(try store.pending().count == 1)
  }

  @Test("cancelling watch() while its retry is sending stops that replay too")
  func cancellationStopsRetryReplay() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    transport.enqueue(.failure(CourierError(.overloaded, status: 503)))
    _ = await engine.replay()
    let watcher = Task { await engine.watch() }
    await clock.waitForSleepers(1)
    let (started, go) = AsyncStream.makeStream(of: Void.self)
    transport.enqueue(
      .handler { _ in
        go.yield()
        try await Task.sleep(for: .seconds(3600))
        return (HTTPResponse(status: 201), ResponseBody())
      })
    clock.advance(by: .milliseconds(1500))
    for await _ in started { break }
    watcher.cancel()
    await watcher.value
    await engine.waitForIdle()
    #expect(engine.state.lastError?.kind == .cancelled)
    #expect(try store.pending().map(\.attempts) == [2])
  }
}
