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

/// What a sync engine logs through its client's logger (decision 2203).
extension SyncEngineTests {
  func engine(logger: Logger) -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: LoggingTransport(transport), options: TransportOptions(logger: logger))
    let clock = self.clock
    return SyncEngine<Article>(client: client, store: store, now: { clock.now })
  }

  @Test("each send names its operation and collection; the pass is logged with what it did")
  func logsReplay() async throws {
    let (logger, log) = Logger.recording()
    let engine = engine(logger: logger)
    let created = try await engine.create(Article(id: "n", title: "new", body: ""))
    try await engine.create(Article(id: "m", title: "refused", body: ""))
    transport.enqueue(status: 201, json: Self.json("n", "new", version: 1, updated: clock.now))
    transport.enqueue(status: 422, json: #"{"code":"validation_failed","message":"No title."}"#)
    _ = await engine.replay()
    let exchanges = log.entries.filter { $0.text.hasPrefix("→") || $0.text.hasPrefix("←") }
    #expect(exchanges.count == 4)
    #expect(exchanges.allSatisfy { $0.value(CourierLogKey.collection) == "articles" })
    let operation = try #require(created.operationID?.uuidString.lowercased())
    #expect(exchanges.prefix(2).allSatisfy { $0.value(CourierLogKey.operationID) == operation })
    #expect(exchanges.last?.value(CourierLogKey.status) == "422")
    let pass = try #require(log.entries.last)
    #expect(pass.text == "Replay pass ended")
    #expect(pass.level == .debug)
    #expect(pass.value(CourierLogKey.replaySent) == "1")
    #expect(pass.value(CourierLogKey.replayRejected) == "1")
    #expect(pass.value(CourierLogKey.replayPending) == "0")
  }

  @Test("a pass a transient failure stopped says so, with the failure's kind")
  func logsStoppedReplay() async throws {
    let (logger, log) = Logger.recording(level: .debug)
    let engine = engine(logger: logger)
    try await engine.create(Article(id: "x", title: "x", body: ""))
    transport.enqueue(.failure(CourierError(.offline)))
    _ = await engine.replay()
    let pass = try #require(log.entries.last)
    #expect(pass.text == "Replay pass stopped by a transient failure")
    #expect(pass.value(CourierLogKey.errorKind) == "offline")
    #expect(pass.value(CourierLogKey.replayPending) == "1")
  }

  @Test("a refresh is logged with its collection and what came of it")
  func logsRefresh() async throws {
    let (logger, log) = Logger.recording(level: .debug)
    let engine = engine(logger: logger)
    transport.enqueue(status: 304, json: "")
    _ = await engine.refresh()
    let entry = try #require(log.entries.last)
    #expect(entry.text == "Refresh: not modified")
    #expect(entry.value(CourierLogKey.collection) == "articles")
  }
}
