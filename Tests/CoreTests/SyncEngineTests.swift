import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// A wall clock the test moves by hand.
final class TestNow: Sendable {
  private let date = Mutex(Date(timeIntervalSinceReferenceDate: 800_000_000))
  var now: Date { date.withLock { $0 } }
  func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

@Suite("SyncEngine")
struct SyncEngineTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()
  let clock = TestNow()

  func engine(
    policy: ConflictPolicy = .lastWriteWins, monitor: ManualPathMonitor? = nil
  ) -> SyncEngine<Article> {
    let client = APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: transport)
    let clock = self.clock
    return SyncEngine<Article>(
      client: client, store: store, pathMonitor: monitor,
      configuration: .init(conflictPolicy: policy),
      now: { clock.now })
  }

  static func json(_ id: String, _ title: String, version: Int, updated: Date) -> String {
    #"{"id":"\#(id)","title":"\#(title)","body":"","version":\#(version),"updated_at":"\#(RFC3339.string(from: updated))"}"#
  }

  func seed(_ ids: [String], version: Int = 1) throws {
    let records = ids.map {
      ServerRecord(
        id: $0, payload: .object(["title": .string("t-\($0)"), "body": .string("")]),
        version: version, updatedAt: clock.now)
    }
    try store.applyServerList(
      records, collection: "articles", etag: "\"list-1\"", refreshedAt: clock.now)
  }

  // MARK: Reads

  @Test("cached first with its age, then a 200 replaces the list and keeps the ETag")
  func swr200() async throws {
    try seed(["a", "b"])
    clock.advance(90)
    let engine = engine()
    let cached = try await engine.cached()
    #expect(cached.source == .cache)
    #expect(cached.items.map(\.value.id) == ["a", "b"])
    #expect(cached.age == 90)
    #expect(cached.isStale)
    transport.enqueue(
      status: 200, json: "[\(Self.json("c", "C", version: 3, updated: clock.now))]",
      headerFields: [.eTag: "\"list-2\""])
    let fresh = await engine.refresh()
    #expect(fresh.error == nil)
    #expect(fresh.items.map(\.value.id) == ["c"])
    #expect(fresh.age == 0)
    #expect(transport.requests.first?.headerFields[.ifNoneMatch] == "\"list-1\"")
    #expect(try store.collectionState("articles").etag == "\"list-2\"")
  }

  @Test("a 304 keeps the records and renews their age")
  func swr304() async throws {
    try seed(["a"])
    clock.advance(30)
    let engine = engine()
    transport.enqueue(status: 304, json: "")
    let fresh = await engine.refresh()
    #expect(fresh.notModified)
    #expect(fresh.items.map(\.value.id) == ["a"])
    #expect(fresh.age == 0)
  }

  @Test("a failed refresh keeps everything and says why")
  func swrFailure() async throws {
    try seed(["a", "b"])
    let engine = engine()
    transport.enqueue(.failure(CourierError(.offline)))
    let fresh = await engine.refresh()
    #expect(fresh.error?.kind == .offline)
    #expect(fresh.items.map(\.value.id) == ["a", "b"])
    #expect(fresh.isStale)
    #expect(engine.state.lastError?.kind == .offline)
  }

  @Test("a 200 never drops a local pending edit")
  func refreshKeepsPending() async throws {
    try seed(["a"])
    let engine = engine()
    try await engine.update(Article(id: "a", title: "mine", body: ""))
    transport.enqueue(
      status: 200, json: "[\(Self.json("a", "theirs", version: 2, updated: clock.now))]")
    let fresh = await engine.refresh()
    #expect(fresh.items.first?.value.title == "mine")
    #expect(fresh.items.first?.value.version == 2)
    #expect(fresh.items.first?.state == .modified)
    #expect(try store.pending().count == 1)
  }

  @Test(
    "a record nested too deep is refused by name, its cached copy kept; the others refresh")
  func refreshRefusesTooDeep() async throws {
    try seed(["a", "deep", "gone"])
    let cachedDeep = try store.record(RecordKey(collection: "articles", id: "deep"))
    let engine = engine()
    let deep =
      String(repeating: "[", count: 100_000) + "18446744073709551617"
      + String(repeating: "]", count: 100_000)
    let list =
      "[\(Self.json("a", "A2", version: 2, updated: clock.now)),"
      + #"{"id":"deep","title":"D2","body":"","version":2,"meta":\#(deep)},"#
      + "\(Self.json("new", "N", version: 1, updated: clock.now))]"
    transport.enqueue(status: 200, json: list, headerFields: [.eTag: "\"list-2\""])
    let fresh = await engine.refresh()
    let error = try #require(fresh.error)
    #expect(error.kind == .invalidResponse && error.code == "record_too_deep")
    #expect(error.field == "meta")
    #expect(error.userMessage.contains("articles record “deep”"), "\(error.userMessage)")
    #expect(error.userMessage.contains("“meta”"), "\(error.userMessage)")
    #expect(fresh.items.map(\.value.id) == ["a", "deep", "new"])
    #expect(fresh.items.first?.value.title == "A2")
    #expect(try store.record(RecordKey(collection: "articles", id: "deep")) == cachedDeep)
    // Not kept: the next refresh asks for the whole list again, and says so again.
    #expect(try store.collectionState("articles").etag == nil)
    // A list whose nesting no record's field holds is refused whole, nothing changed.
    transport.enqueue(
      status: 200, json: "[" + String(repeating: "[", count: 100_000), headerFields: [:])
    let broken = await engine.refresh()
    #expect(broken.error?.kind == .invalidResponse, "\(String(describing: broken.error))")
    transport.enqueue(
      status: 200,
      json: "[" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_001),
      headerFields: [.contentType: "text/html"])
    let whole = await engine.refresh()
    #expect(whole.error?.code == "list_too_deep", "\(String(describing: whole.error))")
    #expect(whole.items.map(\.value.id) == ["a", "deep", "new"])
  }

  @Test("list(): the cache first, then the network snapshot, then the end")
  func listStream() async throws {
    try seed(["a"])
    let engine = engine()
    transport.enqueue(status: 304, json: "")
    var sources: [SyncSnapshot<Article>.Source] = []
    for try await snapshot in engine.list() {
      sources.append(snapshot.source)
      #expect(snapshot.items.map(\.value.id) == ["a"])
    }
    #expect(sources == [.cache, .network])
  }

  // MARK: Writes and replay

  @Test("create, update, delete: requests carry the op id, the base version, in FIFO order")
  func writesInOrder() async throws {
    try seed(["a", "b"])
    let engine = engine()
    let created = try await engine.create(Article(id: "n", title: "new", body: ""))
    let updated = try await engine.update(Article(id: "a", title: "A2", body: ""))
    let deleted = try await engine.delete(id: "b")
    transport.enqueue(status: 201, json: Self.json("n", "new", version: 1, updated: clock.now))
    transport.enqueue(status: 200, json: Self.json("a", "A2", version: 2, updated: clock.now))
    transport.enqueue(status: 204, json: "")
    let report = await engine.replay()
    #expect(report.sent == 3)
    #expect(report.pending == 0)
    let requests = transport.requests
    #expect(
      requests.map(\.summary) == ["PUT /articles/n", "PUT /articles/a", "DELETE /articles/b"])
    #expect(requests[0].headerFields[.ifMatch] == nil)
    #expect(
      requests[0].headerFields[.idempotencyKey] == created.operationID?.uuidString.lowercased())
    #expect(requests[1].headerFields[.ifMatch] == "\"v1\"")
    #expect(
      requests[1].headerFields[.idempotencyKey]
        == "\(updated.operationID?.uuidString.lowercased() ?? "").v1")
    #expect(requests[2].headerFields[.ifMatch] == "\"v1\"")
    #expect(deleted.record?.isDeleted == true)
    #expect(try store.record(RecordKey(collection: "articles", id: "b")) == nil)
    #expect(try store.record(RecordKey(collection: "articles", id: "n"))?.state == .synced)
  }

  @Test("a transient failure stops the replay and keeps every entry")
  func transientStops() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    try await engine.create(Article(id: "y", title: "y", body: ""))
    transport.enqueue(.failure(CourierError(.offline)))
    let report = await engine.replay()
    #expect(report.sent == 0)
    #expect(report.pending == 2)
    #expect(report.stoppedBy?.kind == .offline)
    #expect(transport.requests.count == 1)
    #expect(try store.pending().map(\.attempts) == [1, 0])
    #expect(engine.state.pendingCount == 2)
  }

  @Test("a 422 is marked rejected with the server's message; the queue goes on")
  func businessRefusal() async throws {
    let engine = engine()
    // A title the server refuses (an empty one is refused before it is queued).
    try await engine.create(Article(id: "x", title: "refused", body: ""))
    try await engine.create(Article(id: "y", title: "y", body: ""))
    transport.enqueue(
      status: 422,
      json:
        #"{"code":"validation_failed","message":"The title must not be empty.","field":"title"}"#
    )
    transport.enqueue(status: 201, json: Self.json("y", "y", version: 1, updated: clock.now))
    let report = await engine.replay()
    #expect(report.rejected == 1)
    #expect(report.sent == 1)
    let rejected = try #require(engine.state.rejected.first)
    #expect(
      rejected.state
        == .rejected(message: "The title must not be empty.", code: "validation_failed"))
    #expect(try store.record(RecordKey(collection: "articles", id: "x"))?.state == .created)
    try await engine.discard(id: "x")
    #expect(try store.record(RecordKey(collection: "articles", id: "x")) == nil)
    #expect(engine.state.rejected.isEmpty)
  }

  struct ConflictRow: Sendable, CustomStringConvertible {
    var policy: ConflictPolicy
    var serverNewer: Bool
    var expectedTitle: String
    var expectedRequests: Int
    var expectedConflicted: Int
    var description: String { "\(policy) serverNewer=\(serverNewer)" }
  }

  @Test(
    "409 version_conflict goes to the policy",
    arguments: [
      ConflictRow(
        policy: .lastWriteWins, serverNewer: false, expectedTitle: "mine", expectedRequests: 2,
        expectedConflicted: 0),
      ConflictRow(
        policy: .lastWriteWins, serverNewer: true, expectedTitle: "theirs", expectedRequests: 1,
        expectedConflicted: 0),
      ConflictRow(
        policy: .serverWins, serverNewer: false, expectedTitle: "theirs", expectedRequests: 1,
        expectedConflicted: 0),
      ConflictRow(
        policy: .manual, serverNewer: false, expectedTitle: "mine", expectedRequests: 1,
        expectedConflicted: 1),
    ])
  func conflict(_ row: ConflictRow) async throws {
    try seed(["a"])
    let engine = engine(policy: row.policy)
    let editTime = clock.now.addingTimeInterval(10)
    clock.advance(10)
    try await engine.update(Article(id: "a", title: "mine", body: ""))
    let serverTime = editTime.addingTimeInterval(row.serverNewer ? 5 : -5)
    let current = Self.json("a", "theirs", version: 4, updated: serverTime)
    transport.enqueue(
      status: 409,
      json: #"{"code":"version_conflict","message":"stale","current":\#(current)}"#)
    transport.enqueue(status: 200, json: Self.json("a", "mine", version: 5, updated: clock.now))
    let report = await engine.replay()
    #expect(report.conflicts == 1)
    #expect(transport.requests.count == row.expectedRequests)
    if row.expectedRequests == 2 {
      #expect(transport.requests[1].headerFields[.ifMatch] == "\"v4\"")
      #expect(
        transport.requests[1].headerFields[.idempotencyKey]
          != transport.requests[0].headerFields[.idempotencyKey])
    }
    let record = try #require(try store.record(RecordKey(collection: "articles", id: "a")))
    #expect(record.payload?["title"]?.stringValue == row.expectedTitle)
    #expect(engine.state.conflicted.count == row.expectedConflicted)
    if row.policy == .manual {
      #expect(record.version == 4)
      let id = try #require(engine.state.conflicted.first?.id)
      try await engine.resolveConflict(operationID: id, keepLocal: true)
      #expect(try store.pending().first?.operation.baseVersion == 4)
    }
  }

  @Test("a delete that meets 404 is complete: the record is already gone")
  func deleteAlreadyGone() async throws {
    try seed(["a"])
    let engine = engine()
    try await engine.delete(id: "a")
    transport.enqueue(status: 404, json: #"{"code":"not_found","message":"No such article."}"#)
    let report = await engine.replay()
    #expect(report.sent == 1)
    #expect(report.rejected == 0)
    #expect(try store.record(RecordKey(collection: "articles", id: "a")) == nil)
    #expect(try store.entries().isEmpty)
  }

  @Test("a new edit of a refused record supersedes the refusal")
  func editAfterRefusal() async throws {
    try seed(["a"])
    let engine = engine()
    try await engine.update(Article(id: "a", title: "refused", body: ""))
    transport.enqueue(
      status: 422, json: #"{"code":"validation_failed","message":"The title must not be empty."}"#)
    _ = await engine.replay()
    #expect(engine.state.rejected.count == 1)
    try await engine.update(Article(id: "a", title: "fixed", body: ""))
    transport.enqueue(status: 200, json: Self.json("a", "fixed", version: 2, updated: clock.now))
    let report = await engine.replay()
    #expect(report.sent == 1)
    #expect(try store.entries().isEmpty)
    #expect(engine.state.rejected.isEmpty)
    #expect(try store.record(RecordKey(collection: "articles", id: "a"))?.state == .synced)
  }

  @Test("entries behind a kept conflict wait; other records go on")
  func heldBehindConflict() async throws {
    try seed(["a", "b"])
    let engine = engine(policy: .manual)
    try await engine.update(Article(id: "a", title: "a1", body: ""))
    try await engine.update(Article(id: "b", title: "b1", body: ""))
    let current = Self.json("a", "theirs", version: 3, updated: clock.now)
    transport.enqueue(
      status: 409, json: #"{"code":"version_conflict","message":"stale","current":\#(current)}"#)
    transport.enqueue(status: 200, json: Self.json("b", "b1", version: 2, updated: clock.now))
    let report = await engine.replay()
    #expect(report.conflictsKept == 1)
    #expect(report.sent == 1)
    #expect(transport.requests.map(\.summary) == ["PUT /articles/a", "PUT /articles/b"])
    #expect(engine.state.conflicted.map(\.key.id) == ["a"])
  }

  @Test("cancelling the caller stops the replay; the entry stays pending")
  func cancelledReplay() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    let (started, go) = AsyncStream.makeStream(of: Void.self)
    transport.enqueue(
      .handler { _ in
        go.yield()
        try await Task.sleep(for: .seconds(3600))
        return (HTTPResponse(status: 201), ResponseBody())
      })
    let replay = Task { await engine.replay() }
    for await _ in started { break }
    replay.cancel()
    let report = await replay.value
    #expect(report.stoppedBy?.kind == .cancelled)
    #expect(try store.pending().map(\.attempts) == [1])
  }

  @Test("concurrent replays never interleave and all return", .timeLimit(.minutes(1)))
  func concurrentReplays() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    transport.enqueue(status: 201, json: Self.json("x", "x", version: 1, updated: clock.now))
    let reports = await withTaskGroup(of: ReplayReport.self) { group in
      for _ in 0..<4 { group.addTask { await engine.replay() } }
      var all: [ReplayReport] = []
      for await report in group { all.append(report) }
      return all
    }
    #expect(reports.count == 4)
    #expect(reports.map(\.sent).reduce(0, +) == 1)
    #expect(transport.requests.count == 1)
    #expect(!engine.state.isSyncing)
  }

  // MARK: State and connectivity

  @Test("the state stream starts with the current value and follows writes")
  func stateStream() async throws {
    let engine = engine()
    try await engine.create(Article(id: "x", title: "x", body: ""))
    var states = engine.states().makeAsyncIterator()
    let first = await states.next()
    #expect(first?.pendingCount == 1)
    try await engine.create(Article(id: "y", title: "y", body: ""))
    let second = await states.next()
    #expect(second?.pendingCount == 2)
  }

  @Test("the path coming back replays the queue without anyone calling sync")
  func reconnectReplays() async throws {
    let monitor = ManualPathMonitor()
    let engine = engine(monitor: monitor)
    let watcher = Task { await engine.watch() }
    defer { watcher.cancel() }
    var states = engine.states().makeAsyncIterator()
    monitor.send(.unsatisfied)
    while let state = await states.next(), state.path != .unsatisfied {}
    try await engine.create(Article(id: "x", title: "x", body: ""))
    await engine.waitForIdle()
    #expect(transport.requests.isEmpty)
    transport.enqueue(status: 201, json: Self.json("x", "x", version: 1, updated: clock.now))
    monitor.send(.satisfied)
    while let state = await states.next() {
      if state.path == .satisfied && state.pendingCount == 0 && !state.isSyncing { break }
    }
    #expect(transport.requests.map(\.summary) == ["PUT /articles/x"])
    #expect(try store.pending().isEmpty)
  }
}
