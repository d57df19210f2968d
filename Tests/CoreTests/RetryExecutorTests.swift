import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

final class EventLog: Sendable {
  private let events = Mutex<[RetryEvent]>([])
  func append(_ event: RetryEvent) { events.withLock { $0.append(event) } }
  var all: [RetryEvent] { events.withLock { $0 } }
  var delays: [Duration] {
    all.compactMap {
      if case .retrying(_, _, let delay, _) = $0 { return delay } else { return nil }
    }
  }
  /// The attempts the retry step reported at its end (`succeeded` or `gaveUp`), as the front
  /// learns them (decision 2201).
  var attempts: Int? {
    switch all.last {
    case .succeeded(let attempts), .gaveUp(let attempts, _, _): attempts
    default: nil
    }
  }
}

@Suite("RetryExecutor")
struct RetryExecutorTests {
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/photos")

  func makeStack(_ transport: InMemoryTransport, clock: ManualClock, log: EventLog)
    -> RetryingTransport<ManualClock>
  {
    let executor = RetryExecutor(
      policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5))
    return RetryingTransport(transport, executor: executor) { _, event in log.append(event) }
  }

  @Test("503, 503, 201 → 3 attempts with the expected delays and one idempotency key")
  func retriesOverloaded() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    transport.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    transport.enqueue(status: 201, json: #"{"id":"p1"}"#)
    let clock = ManualClock()
    let log = EventLog()
    let stack = makeStack(transport, clock: clock, log: log)
    let request = HTTPRequest(method: .post, url: url)
    let task = Task { try await stack.send(request, body: .bytes(Data("x".utf8))) }
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500)])
    clock.advance(by: .milliseconds(1500))
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(1500), .seconds(3)])
    clock.advance(by: .seconds(3))
    let (response, _) = try await task.value
    #expect(response.status == 201)
    #expect(log.attempts == 3)
    #expect(log.delays == [.milliseconds(1500), .seconds(3)])
    let keys = Set(transport.requests.compactMap { $0.headerFields[.idempotencyKey] })
    #expect(transport.requests.count == 3)
    #expect(keys.count == 1)
  }

  @Test("422 → one attempt, no wait")
  func businessIsNotRetried() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 422, json: #"{"code":"image_too_large","message":"Too big"}"#)
    let clock = ManualClock()
    let log = EventLog()
    let (response, _) = try await makeStack(transport, clock: clock, log: log).send(
      HTTPRequest(method: .post, url: url))
    #expect(response.status == 422)
    #expect(log.attempts == 1)
    #expect(transport.requests.count == 1)
    #expect(clock.sleepLog.isEmpty)
  }

  @Test("exhausted retries return the last response with its attempt count")
  func exhausted() async throws {
    let transport = InMemoryTransport()
    for _ in 0..<4 { transport.enqueue(status: 502, json: "<html>bad gateway</html>") }
    let clock = ManualClock()
    let log = EventLog()
    let stack = makeStack(transport, clock: clock, log: log)
    let task = Task { try await stack.send(HTTPRequest(method: .get, url: url)) }
    for _ in 0..<3 {
      await clock.waitForSleepers(1)
      clock.advance(by: .seconds(20))
    }
    let (response, _) = try await task.value
    #expect(response.status == 502)
    #expect(log.attempts == 4)
    guard case .gaveUp(4, .attemptsExhausted, _) = log.all.last else {
      Issue.record("expected gaveUp, got \(String(describing: log.all.last))")
      return
    }
  }

  @Test("a transport error that outlasts the retries is thrown with its attempts")
  func thrownAfterRetries() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      .failure(CourierError(.cannotReachHost)), .failure(CourierError(.cannotReachHost)))
    let clock = ManualClock()
    let executor = RetryExecutor(
      policy: RetryPolicy(maxAttempts: 2, baseDelay: .zero), clock: clock,
      random: FixedRandomSource(0))
    let stack = RetryingTransport(transport, executor: executor)
    do {
      _ = try await stack.send(HTTPRequest(method: .get, url: url))
      Issue.record("expected a failure")
    } catch let error as CourierError {
      #expect(error.kind == .cannotReachHost)
      #expect(error.attempts == 2)
    }
  }

  @Test("a timeout on a POST is retried with its key; without one it would not be")
  func timeoutKeyed() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(.failure(CourierError(.timedOut, mayHaveReachedServer: true)))
    transport.enqueue(status: 201)
    let clock = ManualClock()
    let stack = makeStack(transport, clock: clock, log: EventLog())
    let task = Task { try await stack.send(HTTPRequest(method: .post, url: url)) }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    #expect(try await task.value.0.status == 201)
    #expect(transport.requests.count == 2)
  }

  @Test("cancellation during a wait stops at once, with no further attempt")
  func cancellationMidWait() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503)
    transport.enqueue(status: 201)
    let clock = ManualClock()
    let stack = makeStack(transport, clock: clock, log: EventLog())
    let task = Task { try await stack.send(HTTPRequest(method: .get, url: url)) }
    await clock.waitForSleepers(1)
    task.cancel()
    do {
      _ = try await task.value
      Issue.record("expected cancellation")
    } catch let error as CourierError {
      #expect(error.kind == .cancelled)
    }
    #expect(transport.requests.count == 1)
    #expect(clock.sleeperCount == 0)
  }

  @Test("a shared budget stops a storm of failing requests")
  func budget() async throws {
    let transport = InMemoryTransport()
    let budget = SharedRetryBudget(RetryBudget(capacity: 4, refillPerSuccess: 0.1))
    let clock = ManualClock()
    let executor = RetryExecutor(
      policy: RetryPolicy(maxAttempts: 10, baseDelay: .zero), clock: clock,
      random: FixedRandomSource(0),
      budget: budget)
    let stack = RetryingTransport(transport, executor: executor)
    for _ in 0..<10 { transport.enqueue(status: 500) }
    let log = EventLog()
    let (response, _) = try await stack.send(
      HTTPRequest(method: .get, url: url), options: TransportOptions(onRetry: log.append))
    // 4 tokens: retries allowed while tokens > 2, so two failures leave 2 and the third stops.
    #expect(response.status == 500)
    #expect(log.attempts == 2)
    #expect(budget.allowsRetry == false)
  }
}

/// A gate tests open by hand: callers wait until it opens.
actor AsyncGate {
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []
  private var waiterWatchers: [(Int, CheckedContinuation<Void, Never>)] = []

  func wait() async {
    if isOpen { return }
    await withCheckedContinuation { continuation in
      waiters.append(continuation)
      let ready = waiterWatchers.filter { $0.0 <= waiters.count }
      waiterWatchers.removeAll { $0.0 <= waiters.count }
      ready.forEach { $0.1.resume() }
    }
  }

  func waitForWaiters(_ count: Int) async {
    if waiters.count >= count { return }
    await withCheckedContinuation { waiterWatchers.append((count, $0)) }
  }

  func open() {
    isOpen = true
    waiters.forEach { $0.resume() }
    waiters.removeAll()
  }
}

extension URL {
  /// A fixed test URL (never nil for these literals).
  func testURL(_ string: String) -> URL { URL(string: string) ?? self }
}
