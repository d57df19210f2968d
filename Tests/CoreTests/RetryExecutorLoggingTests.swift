import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Testing

/// What the retry step logs (decision 2203), asserted on swift-log's `InMemoryLogHandler`.
extension RetryExecutorTests {
  @Test("each decision is logged once, at its level, with the call's id and the attempt")
  func logsDecisions() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: "{}")
    transport.enqueue(status: 201, json: "{}")
    let clock = ManualClock()
    let (logger, log) = Logger.recording()
    let stack = RetryingTransport(
      LoggingTransport(transport),
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
    let task = Task {
      try await stack.send(
        HTTPRequest(method: .get, url: url), body: nil, options: TransportOptions(logger: logger))
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(1500))
    _ = try await task.value
    let entries = log.entries
    #expect(
      entries.map(\.text).map { $0.replacing(/in \d+ ms/, with: "in N ms") } == [
        "→ GET http://127.0.0.1:9/photos", "← 503 GET /photos in N ms",
        RetryEvent.retrying(
          attempt: 1, maxAttempts: 4, delay: .milliseconds(1500),
          error: CourierError(.overloaded, status: 503)
        ).humanDescription,
        "→ GET http://127.0.0.1:9/photos", "← 201 GET /photos in N ms",
        "succeeded after 2 attempts",
      ])
    #expect(entries.map(\.level) == [.trace, .debug, .info, .trace, .debug, .debug])
    // One call: one id on every line, and each line of an attempt names it.
    #expect(Set(entries.compactMap { $0.value(CourierLogKey.requestID) }).count == 1)
    #expect(entries.allSatisfy { $0.value(CourierLogKey.requestID) != nil })
    #expect(entries.map { $0.value(CourierLogKey.attempt) } == ["1", "1", "1", "2", "2", "2"])
    let retry = entries[2]
    #expect(retry.value(CourierLogKey.errorKind) == "overloaded")
    #expect(retry.value(CourierLogKey.retryDelay) == "1.500")
  }

  @Test("giving up is logged at debug with its reason; a first-attempt success at trace")
  func logsGivingUp() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 404, json: "{}")
    transport.enqueue(status: 200, json: "{}")
    let (logger, log) = Logger.recording()
    let executor = RetryExecutor(
      policy: RetryPolicy(), clock: ManualClock(), random: FixedRandomSource(0.5))
    await #expect(throws: CourierError.self) {
      try await executor.run(safeToRepeat: true, logger: logger) { _ in
        throw CourierError(.business, status: 404)
      }
    }
    _ = try await executor.run(safeToRepeat: true, logger: logger) { _ in 1 }
    #expect(log.entries.map(\.level) == [.debug, .trace])
    #expect(log.entries.first?.text == "giving up after 1 attempt (notTransient): business")
    #expect(log.entries.first?.value(CourierLogKey.giveUpReason) == "notTransient")
    #expect(log.entries.last?.text == "succeeded after 1 attempt")
  }

  @Test("a logger above info sees nothing of a call")
  func quietLoggerCostsNothing() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: "{}")
    let (logger, log) = Logger.recording(level: .notice)
    let stack = RetryingTransport(
      LoggingTransport(transport),
      executor: RetryExecutor(policy: RetryPolicy(), clock: ManualClock()))
    _ = try await stack.send(
      HTTPRequest(method: .get, url: url), body: nil, options: TransportOptions(logger: logger))
    #expect(log.entries.isEmpty)
  }
}
