import ArticlesLibrary
import Courier
import CourierTestKit
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

@Suite("ArticleIndex")
struct ArticleIndexTests {

  @Test("a 503 is retried after the backoff, on the manual clock, and ids keep every digit")
  func retriesAfterBackoff() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: #"{"error":{"code":"unavailable"}}"#)
    transport.enqueue(
      status: 200, json: #"[{"id": 9007199254740993, "title": "Hello"}, {"title": "no id"}]"#)
    let clock = ManualClock()
    let retry = RetryExecutor(
      policy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(2)), clock: clock,
      random: FixedRandomSource(0.5))
    let base = try #require(URL(string: "https://api.example"))
    let index = ArticleIndex(baseURL: base, transport: transport, retry: retry)

    let fetch = Task { try await index.fetch() }
    await clock.waitForSleepers()
    // One attempt so far, now waiting out a jittered delay no longer than the base delay.
    #expect(transport.requests.count == 1)
    let delay = try #require(clock.sleepLog.first)
    #expect(delay > .zero && delay <= .seconds(2))
    clock.advance(by: delay)

    let articles = try await fetch.value
    #expect(articles == [ArticleSummary(id: 9_007_199_254_740_993, title: "Hello")])
    #expect(transport.requests.map(\.path) == ["/articles", "/articles"])
  }

  @Test("a 404 ends at once: no retry, no wait")
  func notFoundIsFinal() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 404, json: #"{"error":{"code":"not_found"}}"#)
    let clock = ManualClock()
    let index = ArticleIndex(
      baseURL: try #require(URL(string: "https://api.example")), transport: transport,
      retry: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))

    await #expect(throws: CourierError.self) { try await index.fetch() }
    #expect(transport.requests.count == 1)
    #expect(clock.sleepLog.isEmpty)
  }

  @Test("the retry is logged and counted: swift-log's and swift-metrics' test kits, no bootstrap")
  func retryIsLoggedAndCounted() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: #"{"error":{"code":"unavailable"}}"#)
    transport.enqueue(status: 200, json: #"[{"id": 1, "title": "Hello"}]"#)
    let clock = ManualClock()
    let metrics = TestMetrics()
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "test", factory: { _ in handler })
    logger.logLevel = .info
    let index = ArticleIndex(
      baseURL: try #require(URL(string: "https://api.example")), transport: transport,
      retry: RetryExecutor(
        policy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(2)), clock: clock,
        random: FixedRandomSource(0.5), metrics: metrics),
      logger: logger)

    let fetch = Task { try await index.fetch() }
    await clock.waitForSleepers()
    clock.advance(by: try #require(clock.sleepLog.first))
    _ = try await fetch.value

    // One retry, after an overloaded server: Courier's documented counter and its info line.
    #expect(
      try metrics.expectCounter("courier_retries_total", [("reason", "overloaded")]).totalValue
        == 1)
    let retry = try #require(handler.entries.first)
    #expect(handler.entries.count == 1, "info shows the retry, not the requests")
    #expect(retry.level == .info)
    #expect(retry.metadata["courier.attempt"] == "1")
    #expect(retry.metadata["courier.error.kind"] == "overloaded")
  }
}
