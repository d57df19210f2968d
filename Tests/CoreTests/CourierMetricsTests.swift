import CoreMetrics
import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import Synchronization
import Testing

/// Every metric of the catalog (the article "Metrics and logging", decision 2203), recorded by
/// the step that owns it into a `TestMetrics` given as the factory: never the global system.
@Suite("CourierMetrics")
struct CourierMetricsTests {
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/photos")

  func stack(
    _ transport: InMemoryTransport, clock: ManualClock, metrics: TestMetrics,
    policy: RetryPolicy = RetryPolicy(), budget: SharedRetryBudget = SharedRetryBudget()
  ) -> RetryingTransport<ManualClock> {
    RetryingTransport(
      transport,
      executor: RetryExecutor(
        policy: policy, clock: clock, random: FixedRandomSource(0.5), budget: budget,
        metrics: metrics))
  }

  @Test("503, 503, 201: one call counted as a success, two retries, the call's time")
  func callRetriedThenSucceeded() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: "{}")
    transport.enqueue(status: 503, json: "{}")
    transport.enqueue(status: 201, json: "{}")
    let clock = ManualClock()
    let metrics = TestMetrics()
    let stack = stack(transport, clock: clock, metrics: metrics)
    let task = Task { try await stack.send(HTTPRequest(method: .get, url: url)) }
    await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(1500))
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(3))
    _ = try await task.value
    #expect(
      try metrics.expectCounter("courier_requests_total", [("outcome", "success")]).totalValue == 1)
    #expect(
      try metrics.expectCounter("courier_retries_total", [("reason", "overloaded")]).totalValue
        == 2)
    // On the executor's clock: the two waits, and no time for the exchanges in memory.
    #expect(
      try metrics.expectTimer("courier_request_duration_seconds").values
        == [Int64(4_500_000_000)])
    #expect(metrics.counters.count == 2)
  }

  @Test(
    "a call ends as the kind of its last failure",
    arguments: [
      (InMemoryTransport.Reply.failure(CourierError(.offline)), "offline"),
      (
        .response(
          HTTPResponse(status: 404, headerFields: [.contentType: "application/json"]),
          body: ResponseBody(bytes: Data(#"{"code":"not_found","message":"No such photo."}"#.utf8))),
        "business"
      ),
      (.failure(CourierError(.timedOut)), "timedOut"),
    ])
  func outcomes(reply: InMemoryTransport.Reply, outcome: String) async throws {
    let transport = InMemoryTransport()
    transport.enqueue(reply)
    let metrics = TestMetrics()
    let stack = stack(
      transport, clock: ManualClock(), metrics: metrics, policy: RetryPolicy(maxAttempts: 1))
    _ = try? await stack.send(HTTPRequest(method: .get, url: url))
    #expect(
      try metrics.expectCounter("courier_requests_total", [("outcome", outcome)]).totalValue == 1)
    #expect(metrics.counters.map(\.label) == ["courier_requests_total"])
  }

  @Test("a retry the shared budget refuses is counted")
  func budgetRefusal() async throws {
    let transport = InMemoryTransport()
    for _ in 0..<3 { transport.enqueue(status: 500) }
    let metrics = TestMetrics()
    // 4 tokens, retries while more than 2: the first failure is retried, the second is not.
    let budget = SharedRetryBudget(RetryBudget(capacity: 4, refillPerSuccess: 0.1))
    let stack = RetryingTransport(
      transport,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: 10, baseDelay: .zero), clock: ManualClock(),
        random: FixedRandomSource(0),
        budget: budget, metrics: metrics))
    let (response, _) = try await stack.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 500)
    #expect(try metrics.expectCounter("courier_retry_budget_refusals_total").totalValue == 1)
    #expect(
      try metrics.expectCounter("courier_retries_total", [("reason", "server")]).totalValue == 1)
    #expect(
      try metrics.expectCounter("courier_requests_total", [("outcome", "server")]).totalValue == 1)
  }

  @Test(
    "body bytes: the whole body of an answered exchange, what progress reported of a failed one")
  func bytesSent() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 201, json: "{}")
    let metrics = TestMetrics()
    let counting = MetricsTransport(transport, metrics: CourierMetrics(factory: metrics))
    _ = try await counting.send(
      HTTPRequest(method: .post, url: url), body: .bytes(Data(count: 1234)),
      options: TransportOptions())
    #expect(try metrics.expectCounter("courier_bytes_sent_total").totalValue == 1234)

    let failing = ProgressThenFailure(sent: 300)
    var options = TransportOptions()
    options.progress = { _ in }
    await #expect(throws: CourierError.self) {
      _ = try await MetricsTransport(failing, metrics: CourierMetrics(factory: metrics)).send(
        HTTPRequest(method: .post, url: url), body: .bytes(Data(count: 1000)), options: options)
    }
    #expect(try metrics.expectCounter("courier_bytes_sent_total").totalValue == 1534)
  }

  /// Reports `sent` bytes, then loses the connection.
  struct ProgressThenFailure: Transport {
    let sent: Int64
    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      options.progress?(TransferProgress(sent: sent, total: body?.length ?? 0))
      throw CourierError(.connectionLost)
    }
  }

  @Test("a replay: the pass's time, each delivery's lag, and the outbox before and after")
  func replay() async throws {
    let transport = InMemoryTransport()
    let store = InMemoryLocalStore()
    let metrics = TestMetrics()
    let committed = Date(timeIntervalSince1970: 1_700_000_000)
    let now = Mutex(committed)
    let client = APIClient(
      baseURL: URL(fileURLWithPath: "/").testURL("http://courier.test"), transport: transport,
      metrics: metrics)
    let engine = SyncEngine<Article>(
      client: client, store: store, now: { now.withLock { $0 } })
    try await engine.create(Article(id: "a", title: "A", body: ""))
    now.withLock { $0 += 5 }
    try await engine.create(Article(id: "b", title: "B", body: ""))
    let depth = try metrics.expectGauge("courier_outbox_depth")
    let oldest = try metrics.expectGauge("courier_outbox_oldest_pending_timestamp_seconds")
    #expect(depth.values == [1, 2])
    // The first write set it; the second, newer, left it.
    #expect(oldest.values == [1_700_000_000])
    transport.enqueue(
      status: 201,
      json: #"{"id":"a","title":"A","body":"","version":1,"updated_at":"2023-11-14T22:13:20Z"}"#)
    transport.enqueue(
      status: 201,
      json: #"{"id":"b","title":"B","body":"","version":1,"updated_at":"2023-11-14T22:13:20Z"}"#)
    now.withLock { $0 += 10 }
    let report = await engine.replay()
    #expect(report.sent == 2)
    #expect(depth.lastValue == 0)
    #expect(oldest.lastValue == 0)
    #expect(try metrics.expectTimer("courier_replay_duration_seconds").values.count == 1)
    // Lag on the engine's wall clock: from each commit (the entries' `enqueuedAt`) to the
    // answer, recorded by the replayer.
    let lags = try metrics.expectTimer("courier_replay_lag_seconds").values
    #expect(lags == [15_000_000_000, 10_000_000_000])
  }

  @Test("path changes by status; the first path a stream yields is not a change")
  func pathChanges() async throws {
    let metrics = TestMetrics()
    let (logger, log) = Logger.recording()
    let observation = PathObservation(metrics: CourierMetrics(factory: metrics), logger: logger)
    await observation.follow(
      ScriptedPaths([.unknown, .satisfied, .satisfied, .unsatisfied, .satisfied]))
    #expect(
      try metrics.expectCounter("courier_path_changes_total", [("status", "satisfied")])
        .totalValue == 2)
    #expect(
      try metrics.expectCounter("courier_path_changes_total", [("status", "unsatisfied")])
        .totalValue == 1)
    #expect(log.entries.map(\.level) == [.debug, .debug, .debug])
    #expect(
      log.entries.map { $0.value(CourierLogKey.pathStatus) }
        == ["satisfied", "unsatisfied", "satisfied"])
    #expect(log.entries.first?.value(CourierLogKey.pathPreviousStatus) == "unknown")
  }

  /// A monitor whose updates are a fixed list, then the end.
  struct ScriptedPaths: PathMonitor {
    let statuses: [PathStatus]
    init(_ statuses: [PathStatus]) { self.statuses = statuses }
    var currentPath: NetworkPath { .unknown }
    func run() async throws {}
    func updates() -> AsyncStream<NetworkPath> {
      AsyncStream { continuation in
        for status in statuses { continuation.yield(NetworkPath(status: status)) }
        continuation.finish()
      }
    }
  }

  @Test("queued uploads by state: waiting, sending, rejected")
  func queuedUploads() throws {
    let metrics = TestMetrics()
    let entry = { (id: String, state: OutboxEntryState) in
      OutboxEntry(
        sequence: 1,
        operation: OutboxOperation(
          key: RecordKey(collection: QueuedUpload.collection, id: id), kind: .create,
          payload: nil, baseVersion: nil, enqueuedAt: Date()),
        state: state, attempts: 0)
    }
    CourierMetrics(factory: metrics).queuedUploads(
      [
        entry("a", .pending), entry("b", .pending), entry("c", .pending),
        entry("d", .rejected(message: "no", code: nil)),
      ], sending: ["b"])
    #expect(
      try metrics.expectGauge("courier_queued_uploads", [("state", "waiting")]).lastValue == 2)
    #expect(
      try metrics.expectGauge("courier_queued_uploads", [("state", "sending")]).lastValue == 1)
    #expect(
      try metrics.expectGauge("courier_queued_uploads", [("state", "rejected")]).lastValue == 1)
  }

  @Test("swift-metrics' no-op factory disables every record: no handle is made")
  func disabled() {
    #expect(!CourierMetrics(factory: NOOPMetricsHandler.instance).isEnabled)
    #expect(CourierMetrics(factory: TestMetrics()).isEnabled)
    #expect(!CourierMetrics.disabled.isEnabled)
  }
}
