import CourierCore
import CourierDomain
import CourierLinux
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

/// A session given the application's `Logger` and `MetricsFactory` (decision 2203): what it
/// logs and records end to end, with the fakes, and never a secret.
@Suite("CourierSession: logging and metrics")
struct CourierSessionLoggingTests {
  func temporaryDirectory(_ prefix: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  func session(
    _ dir: URL, transport: InMemoryTransport, logger: Logger, metrics: TestMetrics,
    token: String? = nil
  ) throws -> CourierSession {
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = try #require(URL(string: "http://127.0.0.1:9"))
    config.dataDirectory = dir.appendingPathComponent("data")
    config.token = token
    config.retry.baseDelay = .milliseconds(1)
    config.retry.maxDelay = .milliseconds(1)
    return try CourierSession(
      config: config,
      overrides: AdapterOverrides(
        transport: transport, pathMonitor: ManualPathMonitor(), localStore: InMemoryLocalStore()),
      logger: logger, metrics: metrics)
  }

  @Test("the token, in Authorization and in a query, and the password never reach a log entry")
  func noSecrets() async throws {
    let dir = try temporaryDirectory("courier-session-log")
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: "{}")
    transport.enqueue(status: 200, json: "[]")
    transport.enqueue(status: 200, json: #"{"access_token":"n3w-t0ken","refresh_token":"r3fresh"}"#)
    let (logger, log) = Logger.recording()
    let courier = try session(
      dir, transport: transport, logger: logger, metrics: TestMetrics(), token: "s3cr3t-token")
    _ = try await courier.environment.client.send(.get, "/articles?access_token=s3cr3t-token&x=1")
    try? await courier.login(username: "alice", password: "hunter2-password")
    #expect(
      transport.requests.first?.headerFields[.authorization] == "Bearer s3cr3t-token",
      "the server got it: redaction is the log's business")
    let entries = log.entries
    #expect(entries.contains { $0.text.contains("Authorization: <redacted>") })
    #expect(entries.contains { $0.text.contains("access_token=REDACTED") })
    for entry in entries {
      let values = entry.metadata.values.map { "\($0)" }
      for secret in ["s3cr3t-token", "hunter2-password", "n3w-t0ken", "r3fresh"] {
        #expect(!entry.text.contains(secret), "\(secret) in \(entry.text)")
        #expect(!values.contains { $0.contains(secret) }, "\(secret) in \(entry.metadata)")
      }
      // One line each: no control character in a message or a value.
      for text in [entry.text] + values {
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
      }
    }
  }

  @Test("an article added and synced: the call, the replay, the lag and the outbox recorded")
  func articleMetrics() async throws {
    let dir = try temporaryDirectory("courier-session-log")
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    let metrics = TestMetrics()
    let (logger, log) = Logger.recording(level: .debug)
    let courier = try session(dir, transport: transport, logger: logger, metrics: metrics)
    let articles = try courier.collections.articles()
    let receipt = try await articles.add(title: "Hello")
    let depth = try metrics.expectGauge("courier_outbox_depth")
    #expect(depth.lastValue == 1)
    #expect(
      try metrics.expectGauge("courier_outbox_oldest_pending_timestamp_seconds").lastValue ?? 0
        > 0)
    transport.enqueue(
      status: 201,
      json: #"{"id":"\#(receipt.key.id)","title":"Hello","body":"","version":1,"#
        + #""updated_at":"2024-01-01T00:00:00Z"}"#)
    let report = try await courier.sync()
    #expect(report.sent == 1)
    #expect(depth.lastValue == 0)
    #expect(
      try metrics.expectCounter("courier_requests_total", [("outcome", "success")]).totalValue
        == 1)
    #expect(try metrics.expectCounter("courier_bytes_sent_total").totalValue > 0)
    #expect(try metrics.expectTimer("courier_replay_duration_seconds").values.count == 1)
    #expect(try metrics.expectTimer("courier_replay_lag_seconds").values.count == 1)
    #expect(
      try metrics.expectGauge("courier_queued_uploads", [("state", "waiting")]).lastValue == 0)
    let pass = try #require(log.entries.last { $0.text == "Replay pass ended" })
    #expect(pass.value(CourierLogKey.replaySent) == "1")
    // The exchange of the write names its operation and collection.
    let answer = try #require(log.entries.first { $0.text.hasPrefix("← 201") })
    #expect(answer.value(CourierLogKey.collection) == "articles")
    #expect(
      answer.value(CourierLogKey.operationID) == receipt.operationID?.uuidString.lowercased())
  }
}
