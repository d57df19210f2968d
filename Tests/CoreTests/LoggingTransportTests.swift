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

@Suite("LoggingTransport")
struct LoggingTransportTests {
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/articles")

  @Test("never logs an Authorization or Cookie value")
  func redacts() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let (logger, log) = Logger.recording()
    let request = HTTPRequest(
      method: .get, url: url,
      headerFields: [
        .authorization: "Bearer s3cr3t", .cookie: "sid=abc", .accept: "application/json",
      ])
    _ = try await LoggingTransport(transport).send(
      request, body: nil, options: TransportOptions(logger: logger))
    let text = log.entries.map(\.text).joined(separator: "\n")
    #expect(!text.contains("s3cr3t"))
    #expect(!text.contains("sid=abc"))
    #expect(text.contains("Authorization: <redacted>"))
    #expect(text.contains("Accept: application/json"))
    #expect(text.contains("← 200 GET /articles"))
  }

  @Test("the request at trace, the answer at debug, both with the call's request id")
  func levelsAndMetadata() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 204)
    let (logger, log) = Logger.recording()
    _ = try await LoggingTransport(transport).send(
      HTTPRequest(method: .delete, url: url), body: nil, options: TransportOptions(logger: logger))
    let entries = log.entries
    #expect(entries.map(\.level) == [.trace, .debug])
    #expect(entries.first?.text == "→ DELETE http://127.0.0.1:9/articles")
    #expect(entries.last?.value(CourierLogKey.status) == "204")
    // A call through no retry step gets its id here: the same on both lines, 16 hex digits.
    let ids = Set(entries.compactMap { $0.value(CourierLogKey.requestID) })
    #expect(ids.count == 1)
    #expect(ids.first?.count == 16)
    #expect(ids.first?.allSatisfy(\.isHexDigit) == true)
  }

  @Test("a failure at debug, with its kind")
  func failure() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(.failure(CourierError(.offline)))
    let (logger, log) = Logger.recording()
    await #expect(throws: CourierError.self) {
      _ = try await LoggingTransport(transport).send(
        HTTPRequest(method: .get, url: url), body: nil, options: TransportOptions(logger: logger))
    }
    let last = try #require(log.entries.last)
    #expect(last.level == .debug)
    #expect(last.text.hasPrefix("✗ GET /articles in "))
    #expect(last.value(CourierLogKey.errorKind) == "offline")
  }

  @Test("a logger at info sees no exchange, and no request id is drawn for it")
  func quietAtInfo() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let (logger, log) = Logger.recording(level: .info)
    _ = try await LoggingTransport(transport).send(
      HTTPRequest(method: .get, url: url), body: nil, options: TransportOptions(logger: logger))
    #expect(log.entries.isEmpty)
    #expect(transport.requests.count == 1)
  }
}
