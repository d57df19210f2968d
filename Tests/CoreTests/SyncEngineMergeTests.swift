import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestKit
import Foundation
import Testing

@Suite("SyncEngine, merge policy")
struct SyncEngineMergeTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()
  let clock = TestNow()
  static let key = RecordKey(collection: "articles", id: "a")

  func engine(resolver: FieldResolver? = nil) -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    let clock = self.clock
    var configuration = SyncEngine<Article>.Configuration(
      conflictPolicy: .merge)
    configuration.mergeResolver = resolver
    return SyncEngine<Article>(
      client: client, store: store, configuration: configuration, now: { clock.now })
  }

  func seed() throws {
    let record = ServerRecord(
      id: "a", payload: .object(["title": .string("T"), "body": .string("B")]), version: 1,
      updatedAt: clock.now)
    try store.applyServerList([record], collection: "articles", etag: nil, refreshedAt: clock.now)
  }

  func json(title: String, body: String, version: Int, offset: TimeInterval = -5) -> String {
    let updated = RFC3339.string(from: clock.now.addingTimeInterval(offset))
    return
      #"{"id":"a","title":"\#(title)","body":"\#(body)","version":\#(version),"updated_at":"\#(updated)"}"#
  }

  func conflict(title: String, body: String, offset: TimeInterval = -5) -> String {
    let current = json(title: title, body: body, version: 4, offset: offset)
    return #"{"code":"version_conflict","message":"stale","current":\#(current)}"#
  }

  func sentJSON(_ index: Int) throws -> JSONValue {
    try JSONValue(parsing: try #require(transport.receivedBodies[index]))
  }

  @Test("title here, body at the server: both are sent on the server's version")
  func differentFields() async throws {
    try seed()
    let engine = engine()
    clock.advance(10)
    try await engine.update(Article(id: "a", title: "mine", body: "B"))
    transport.enqueue(status: 409, json: conflict(title: "T", body: "theirs"))
    transport.enqueue(status: 200, json: json(title: "mine", body: "theirs", version: 5))
    let report = await engine.replay()
    #expect(report.conflictsMerged == 1 && report.conflicts == 1)
    #expect(report.sent == 1 && report.pending == 0 && report.stoppedBy == nil)
    #expect(transport.requests.count == 2)
    #expect(transport.requests[1].headerFields[.ifMatch] == "\"v4\"")
    #expect(
      transport.requests[1].headerFields[.idempotencyKey]
        != transport.requests[0].headerFields[.idempotencyKey])
    let sent = try sentJSON(1)
    #expect(sent["title"]?.stringValue == "mine" && sent["body"]?.stringValue == "theirs")
    let record = try #require(try store.record(Self.key))
    #expect(record.state == .synced && record.version == 5)
    #expect(record.payload?["body"]?.stringValue == "theirs")
  }

  @Test("the merged fields are what the user sees while the re-send waits")
  func mergedShownWhilePending() async throws {
    try seed()
    let engine = engine()
    clock.advance(10)
    try await engine.update(Article(id: "a", title: "mine", body: "B"))
    transport.enqueue(status: 409, json: conflict(title: "T", body: "theirs"))
    transport.enqueue(.failure(CourierError(.offline)))
    let report = await engine.replay()
    #expect(report.conflictsMerged == 1)
    #expect(report.stoppedBy != nil && report.pending == 1)
    let record = try #require(try store.record(Self.key))
    #expect(record.payload?["title"]?.stringValue == "mine")
    #expect(record.payload?["body"]?.stringValue == "theirs")
    #expect(record.version == 4 && record.state == .modified)
    #expect(try store.pending().first?.operation.baseVersion == 4)
  }

  @Test("both changed the title: the collection's resolver decides")
  func resolver() async throws {
    try seed()
    let engine = engine(resolver: { _, _, mine, theirs in
      .string("\(mine?.stringValue ?? "") + \(theirs?.stringValue ?? "")")
    })
    clock.advance(10)
    try await engine.update(Article(id: "a", title: "mine", body: "B"))
    transport.enqueue(status: 409, json: conflict(title: "theirs", body: "B"))
    transport.enqueue(status: 200, json: json(title: "mine + theirs", body: "B", version: 5))
    _ = await engine.replay()
    #expect(try sentJSON(1)["title"]?.stringValue == "mine + theirs")
  }

  @Test("a delete against a record changed at the server is kept for the user")
  func deleteAgainstEdit() async throws {
    try seed()
    let engine = engine()
    try await engine.delete(id: "a")
    transport.enqueue(status: 409, json: conflict(title: "T", body: "theirs"))
    let report = await engine.replay()
    #expect(report.conflictsKept == 1 && report.conflictsMerged == 0)
    #expect(transport.requests.count == 1)
    #expect(engine.state.conflicted.map(\.key) == [Self.key])
  }

  @Test("a delete of a record the server did not change is sent on the new version")
  func deleteUnchanged() async throws {
    try seed()
    let engine = engine()
    try await engine.delete(id: "a")
    transport.enqueue(status: 409, json: conflict(title: "T", body: "B"))
    transport.enqueue(status: 204, json: "")
    let report = await engine.replay()
    #expect(report.sent == 1 && report.conflictsResent == 1)
    #expect(transport.requests.map(\.summary) == ["DELETE /articles/a", "DELETE /articles/a"])
    #expect(transport.requests[1].headerFields[.ifMatch] == "\"v4\"")
    #expect(try store.record(Self.key) == nil)
  }
}
