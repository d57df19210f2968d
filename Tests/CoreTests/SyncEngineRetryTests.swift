import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Testing

/// `retryEntry`, `retryAllEntries` and `discardEntry` with the fakes.
@Suite("SyncEngine retry and discard")
struct SyncEngineRetryTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()

  func engine() -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    return SyncEngine<Article>(
      client: client, store: store, configuration: .init())
  }

  func refuse() {
    transport.enqueue(
      status: 422, json: #"{"code":"validation_failed","message":"No.","field":"title"}"#)
  }

  func accept(_ id: String, _ title: String, version: Int = 1) {
    transport.enqueue(
      status: 200,
      json: #"{"id":"\#(id)","title":"\#(title)","body":"","version":\#(version)}"#)
  }

  @Test("a refused entry goes back in the queue under a new key, in its place, and is sent")
  func retryOne() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    refuse()
    _ = await engine.replay()
    let refused = try #require(engine.state.rejected.first)
    let retried = try await engine.retryEntry(operationID: refused.id)
    #expect(retried.id != refused.id)
    #expect(retried.sequence == refused.sequence)
    #expect(retried.state == .pending)
    #expect(retried.attempts == refused.attempts)
    #expect(try store.entry(refused.id) == nil)
    #expect(engine.state.rejected.isEmpty && engine.state.pendingCount == 1)
    accept("x", "x")
    let report = await engine.replay()
    #expect(report.sent == 1)
    let keys = transport.requests.map { $0.headerFields[.idempotencyKey] }
    #expect(keys == [refused.id.uuidString.lowercased(), retried.id.uuidString.lowercased()])
    #expect(try store.record(RecordKey(collection: "articles", id: "x"))?.state == .synced)
  }

  @Test("retryAllEntries requeues every refused entry and leaves pending ones alone")
  func retryAll() async throws {
    let engine = engine()
    try await engine.create(Article(id: "a", title: "a", body: ""))
    try await engine.create(Article(id: "b", title: "b", body: ""))
    refuse()
    refuse()
    _ = await engine.replay()
    try await engine.create(Article(id: "c", title: "c", body: ""))
    let pendingBefore = try store.pending().map(\.id)
    let retried = try await engine.retryAllEntries()
    #expect(retried.map(\.key.id) == ["a", "b"])
    #expect(try store.pending().map(\.key.id) == ["a", "b", "c"])
    #expect(try store.pending().last?.id == pendingBefore.last)
  }

  @Test("an unknown id is notFound; discardEntry restores the server's copy")
  func discard() async throws {
    let engine = engine()
    await #expect(throws: StoreError.self) { try await engine.retryEntry(operationID: UUID()) }
    await #expect(throws: StoreError.self) { try await engine.discardEntry(operationID: UUID()) }
    try store.applyServerList(
      [
        ServerRecord(
          id: "s", payload: .object(["title": .string("server"), "body": .string("")]),
          version: 3, updatedAt: nil)
      ], collection: "articles", etag: nil, refreshedAt: Date())
    try await engine.update(Article(id: "s", title: "mine", body: "", version: 3))
    refuse()
    _ = await engine.replay()
    let refused = try #require(engine.state.rejected.first)
    let (entry, record) = try await engine.discardEntry(operationID: refused.id)
    #expect(entry.id == refused.id)
    #expect(record?.state == .synced && record?.payload?["title"]?.stringValue == "server")
    #expect(try store.entries().isEmpty)
    #expect(engine.state.rejected.isEmpty)
  }
}
