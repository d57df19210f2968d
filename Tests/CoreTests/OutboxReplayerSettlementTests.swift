import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// Decision 2401 through the replayer, its store and its record sender, with a scripted
/// transport: a write whose replies prove nothing is parked once the server answers a probe,
/// and only then; an edit against a deletion is settled by the policy.
@Suite("OutboxReplayer, parked writes and edits against deletions", .timeLimit(.minutes(1)))
struct OutboxReplayerSettlementTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()

  static let page = "<html><body>Please log in to the network</body></html>"

  func replayer(_ policy: ConflictPolicy = .lastWriteWins) -> OutboxReplayer {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    let replayer = OutboxReplayer(store: store)
    replayer.register(
      .records(
        .articles, client: client,
        decision: ReplayDecision(policy: policy, collection: .articles)))
    return replayer
  }

  static func key(_ id: String) -> RecordKey { RecordKey(collection: "articles", id: id) }

  func create(_ id: String) throws {
    try store.applyAndEnqueue(
      .put(Self.key(id), payload: .object(["title": .string(id)])),
      OutboxOperation(
        key: Self.key(id), kind: .create, payload: .object(["title": .string(id)]),
        baseVersion: nil, enqueuedAt: Date()))
  }

  /// Record `id` synced at version 3, then edited.
  func edit(_ id: String) throws -> UUID {
    try store.applyServerRecord(
      ServerRecord(id: id, payload: .object(["title": .string("old")]), version: 3),
      key: Self.key(id))
    let operation = OutboxOperation(
      key: Self.key(id), kind: .update, payload: .object(["title": .string("mine")]),
      baseVersion: 3, enqueuedAt: Date())
    try store.applyAndEnqueue(
      .put(Self.key(id), payload: .object(["title": .string("mine")])), operation)
    return operation.id
  }

  static func record(_ id: String, version: Int, title: String = "mine") -> String {
    #"{"id":"\#(id)","title":"\#(title)","version":\#(version)}"#
  }

  var summaries: [String] { transport.requests.map(\.summary) }

  @Test("a write whose replies prove nothing stops the queue up to its bound, then is parked")
  func parkedAfterItsBound() async throws {
    let replayer = replayer()
    try create("a")
    try create("b")
    try create("c")
    let a = try #require(try store.pending().first)
    // Twice: the reply is not the record; the pass stops, nothing behind it leaves (0414).
    for attempt in 1...2 {
      transport.enqueue(status: 200, json: #"{"ok":true}"#)
      let report = await replayer.replay()
      #expect(report.stoppedBy?.kind == .notTheServer && report.sent == 0 && report.parked == 0)
      #expect(try store.entry(a.id)?.attempts == attempt)
    }
    // The third: the record's read is answered by the server itself (its own 404): parked, and
    // the writes behind it go.
    transport.enqueue(status: 200, json: #"{"ok":true}"#)
    transport.enqueue(status: 404, json: #"{"code":"not_found","message":"No such article."}"#)
    transport.enqueue(status: 201, json: Self.record("b", version: 1))
    transport.enqueue(status: 201, json: Self.record("c", version: 1))
    let report = await replayer.replay()
    #expect(report.parked == 1 && report.sent == 2 && report.pending == 0)
    #expect(report.stoppedBy == nil)
    #expect(
      summaries == [
        "PUT /articles/a", "PUT /articles/a", "PUT /articles/a", "GET /articles/a",
        "PUT /articles/b", "PUT /articles/c",
      ])
    let parked = try #require(try store.entry(a.id))
    guard case .parked(let reason, let code) = parked.state else {
      Issue.record("not parked: \(parked.state)")
      return
    }
    #expect(code == "reply_not_record" && reason.contains("never proved"))
    #expect(!reason.contains("Wi-Fi"))
    #expect(replayer.state.parked.map(\.id) == [a.id])
    // Sent again under the same key by a retry; still unproven, parked again at once.
    let retried = try replayer.retryEntry(operationID: a.id)
    #expect(retried.id == a.id && retried.state == .pending)
    transport.enqueue(status: 200, json: #"{"ok":true}"#)
    transport.enqueue(status: 200, json: Self.record("a", version: 1, title: "a"))
    let again = await replayer.replay()
    #expect(again.parked == 1 && again.stoppedBy == nil)
    #expect(summaries.suffix(2) == ["PUT /articles/a", "GET /articles/a"])
    let keys = transport.requests.filter { $0.method == .put && $0.summary.hasSuffix("/a") }
      .map { $0.headerFields[.idempotencyKey] }
    #expect(Set(keys).count == 1, "one Idempotency-Key for every send of the write")
  }

  @Test("behind a page answering everything, the probe fails: nothing parked, nothing behind sent")
  func portalParksNothing() async throws {
    let replayer = replayer()
    try create("a")
    try create("b")
    let a = try #require(try store.pending().first)
    for _ in 1...4 {
      transport.enqueue(
        .response(
          HTTPResponse(status: 200, headerFields: [.contentType: "text/html"]),
          body: ResponseBody(bytes: Data(Self.page.utf8))))
    }
    for _ in 1...2 {
      transport.enqueue(
        .response(
          HTTPResponse(status: 200, headerFields: [.contentType: "text/html"]),
          body: ResponseBody(bytes: Data(Self.page.utf8))))
    }
    var last = ReplayReport()
    for _ in 1...4 { last = await replayer.replay() }
    #expect(last.stoppedBy?.kind == .notTheServer && last.parked == 0 && last.sent == 0)
    #expect(try store.entry(a.id)?.state == .pending)
    #expect(!summaries.contains("PUT /articles/b"))
    #expect(summaries.filter { $0 == "GET /articles/a" }.count == 2)
  }

  @Test("an edit meets a deletion the server answers with 409 and no record: each policy")
  func editAgainstDeletion() async throws {
    let gone = #"{"code":"version_conflict","message":"The article was changed by someone else."}"#
    // Last write wins: sent again as a create, without If-Match.
    do {
      let replayer = replayer(.lastWriteWins)
      _ = try edit("a")
      transport.enqueue(status: 409, json: gone)
      transport.enqueue(status: 201, json: Self.record("a", version: 1))
      let report = await replayer.replay()
      #expect(report.conflictsRecreated == 1 && report.conflictsGone == 1 && report.sent == 1)
      let put = try #require(transport.requests.last)
      #expect(put.method == .put && put.headerFields[.ifMatch] == nil)
      #expect(try store.record(Self.key("a"))?.version == 1)
      #expect(try store.pending().isEmpty)
    }
    // Server wins: the edit and the record are dropped, nothing more is sent.
    do {
      let replayer = replayer(.serverWins)
      _ = try edit("b")
      transport.enqueue(status: 409, json: gone)
      let sentBefore = transport.requests.count
      let report = await replayer.replay()
      #expect(report.conflictsGoneDropped == 1 && report.conflictsTakenFromServer == 1)
      #expect(transport.requests.count == sentBefore + 1)
      #expect(try store.record(Self.key("b")) == nil)
      #expect(try store.entries().isEmpty)
    }
    // Manual: kept for the user, the record's later writes held, its server copy dropped.
    do {
      let replayer = replayer(.manual)
      let id = try edit("c")
      transport.enqueue(status: 409, json: gone)
      let report = await replayer.replay()
      #expect(report.conflictsKept == 1 && report.conflictsGone == 1)
      #expect(try store.entry(id)?.state == .conflicted(serverRecord: .null))
      #expect(try store.record(Self.key("c"))?.server == nil)
      // Keeping the edit sends it as a create.
      try replayer.resolveConflict(operationID: id, keepLocal: true)
      transport.enqueue(status: 201, json: Self.record("c", version: 1))
      let resolved = await replayer.replay()
      #expect(resolved.sent == 1 && transport.requests.last?.headerFields[.ifMatch] == nil)
      #expect(try store.entries().isEmpty)
    }
  }

  @Test("an edit the server made anew (201 at version 1): kept, or deleted again by server wins")
  func recreatedByTheServer() async throws {
    do {
      let replayer = replayer(.lastWriteWins)
      _ = try edit("a")
      transport.enqueue(status: 201, json: Self.record("a", version: 1))
      let report = await replayer.replay()
      #expect(report.sent == 1 && report.conflictsRecreated == 1 && report.stoppedBy == nil)
      #expect(try store.record(Self.key("a"))?.version == 1)
    }
    do {
      let replayer = replayer(.serverWins)
      _ = try edit("b")
      transport.enqueue(status: 201, json: Self.record("b", version: 1))
      transport.enqueue(.response(HTTPResponse(status: 204)))
      let report = await replayer.replay()
      #expect(report.conflictsGoneDropped == 1 && report.sent == 1 && report.pending == 0)
      let delete = try #require(transport.requests.last)
      #expect(delete.method == .delete && delete.headerFields[.ifMatch] == "\"v1\"")
      #expect(try store.record(Self.key("b")) == nil)
    }
  }
}
