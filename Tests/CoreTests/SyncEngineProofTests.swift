import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// The replay completes a write only on a reply that proves the intended server applied it
/// (decision 0414); every other answer keeps the entry pending, its key unchanged.
@Suite("SyncEngine: proof of delivery")
struct SyncEngineProofTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()
  let clock = TestNow()
  static let portal = "<html><body><h1>Please log in to the network</h1></body></html>"

  func engine() -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    let clock = self.clock
    return SyncEngine<Article>(
      client: client, store: store, configuration: .init(),
      now: { clock.now })
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let reply: InMemoryTransport.Reply
    let kind: CourierError.Kind
    var testDescription: String { name }
  }

  static func page(_ status: HTTPResponse.Status, headerFields: HTTPFields = [:])
    -> InMemoryTransport.Reply
  {
    var all = headerFields
    all[.contentType] = "text/html"
    return .response(
      HTTPResponse(status: status, headerFields: all), body: ResponseBody(bytes: Data(portal.utf8)))
  }

  static let rows: [Row] = [
    Row(name: "captive portal 200 text/html", reply: page(200), kind: .notTheServer),
    Row(
      name: "302 to the portal",
      reply: page(302, headerFields: [.location: "http://portal.example/login"]),
      kind: .notTheServer
    ),
    Row(name: "511 network login", reply: page(511), kind: .notTheServer),
    Row(name: "403 page from a proxy", reply: page(403), kind: .notTheServer),
    Row(
      name: "200 with JSON that is not the record",
      reply: .response(
        HTTPResponse(status: 200), body: ResponseBody(bytes: Data(#"{"ok":true}"#.utf8))),
      kind: .notTheServer),
    Row(
      name: "401 session expired",
      reply: .response(
        HTTPResponse(status: 401),
        body: ResponseBody(bytes: Data(#"{"code":"unauthorized","message":"x"}"#.utf8))),
      kind: .unauthorized),
    Row(
      name: "a local failure while sending",
      reply: .failure(CourierError(store: StoreError(.io, "The disk is full.", path: "/d/x"))),
      kind: .localStore),
    Row(
      name: "an unreadable reply",
      reply: .failure(CourierError(.invalidResponse, mayHaveReachedServer: true)),
      kind: .invalidResponse),
  ]

  @Test("an answer that proves nothing stops the replay and keeps every entry", arguments: rows)
  func keepsPending(_ row: Row) async throws {
    let engine = engine()
    let first = try await engine.create(Article(id: "x", title: "x", body: "b"))
    try await engine.create(Article(id: "y", title: "y", body: ""))
    transport.enqueue(row.reply)
    let report = await engine.replay()
    #expect(report.sent == 0)
    #expect(report.rejected == 0)
    #expect(report.pending == 2)
    #expect(report.stoppedBy?.kind == row.kind, "\(String(describing: report.stoppedBy))")
    #expect(transport.requests.count == 1)
    #expect(try store.pending().first?.operation.id == first.operationID)
    let local = try #require(try store.record(RecordKey(collection: "articles", id: "x")))
    #expect(local.state == .created)
    #expect(local.payload?["body"] == .string("b"))
    #expect(engine.state.pendingCount == 2)
    #expect(engine.state.rejected.isEmpty)

    // The same key goes out again when the server answers, and that reply completes it.
    transport.enqueue(
      status: 201, json: SyncEngineTests.json("x", "x", version: 1, updated: clock.now))
    transport.enqueue(
      status: 201, json: SyncEngineTests.json("y", "y", version: 1, updated: clock.now))
    let again = await engine.replay()
    #expect(again.sent == 2)
    #expect(again.pending == 0)
    let keys = transport.requests.map { $0.headerFields[.idempotencyKey] }
    #expect(keys.count == 3)
    #expect(keys[0] == keys[1])
    #expect(keys[0] == first.operationID?.uuidString.lowercased())
  }

  @Test("a delete whose 404 is a page stays pending; the server's own 404 completes it")
  func deleteNotFound() async throws {
    try store.applyServerList(
      [
        ServerRecord(
          id: "a", payload: .object(["title": .string("A"), "body": .string("")]), version: 1)
      ], collection: "articles", etag: nil, refreshedAt: clock.now)
    let engine = engine()
    try await engine.delete(id: "a")
    transport.enqueue(Self.page(404))
    let portal = await engine.replay()
    #expect(portal.stoppedBy?.kind == .notTheServer)
    #expect(portal.pending == 1)
    transport.enqueue(status: 404, json: #"{"code":"not_found","message":"No such article"}"#)
    let gone = await engine.replay()
    #expect(gone.sent == 1)
    #expect(gone.pending == 0)
    #expect(try store.record(RecordKey(collection: "articles", id: "a")) == nil)
  }

  @Test("a list that is a login page keeps the stored list and says why")
  func refreshPortal() async throws {
    try store.applyServerList(
      [
        ServerRecord(
          id: "a", payload: .object(["title": .string("A"), "body": .string("")]), version: 1)
      ], collection: "articles", etag: nil, refreshedAt: clock.now)
    let engine = engine()
    transport.enqueue(Self.page(200))
    let snapshot = await engine.refresh()
    #expect(snapshot.error?.kind == .notTheServer)
    #expect(snapshot.items.map(\.value.id) == ["a"])
    #expect(snapshot.error?.userMessage.contains("not your server") == true)
  }
}
