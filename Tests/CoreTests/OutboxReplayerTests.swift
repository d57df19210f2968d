import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// A sender of its own for a collection, as issue 13's uploads register one: it logs what it is
/// handed (with the attempt the replayer counted) and answers as told.
final class ScriptedSender: ReplaySender {
  private let state = Mutex<(sent: [OutboxEntry], answers: [ReplayAnswer])>(([], []))
  private let log: SendLog

  init(log: SendLog, answers: [ReplayAnswer] = []) {
    self.log = log
    state.withLock { $0.answers = answers }
  }

  var sent: [OutboxEntry] { state.withLock { $0.sent } }

  func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer
  {
    log.append("\(entry.key)")
    return state.withLock { state in
      state.sent.append(entry)
      return state.answers.isEmpty ? .delivered(nil) : state.answers.removeFirst()
    }
  }
}

/// The order sends happened in, across senders.
final class SendLog: Sendable {
  private let entries = Mutex<[String]>([])
  func append(_ text: String) { entries.withLock { $0.append(text) } }
  var all: [String] { entries.withLock { $0 } }
}

/// A transport that logs each request's path into a `SendLog` before the in-memory one answers.
struct LoggingFake: Transport {
  let inner: InMemoryTransport
  let log: SendLog
  func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions) async throws
    -> (HTTPResponse, ResponseBody)
  {
    let path = (request.url?.path ?? "").split(separator: "/").map(String.init)
    log.append(path.joined(separator: "/"))
    return try await inner.send(request, body: body, options: options)
  }
}

/// A task executor with a thread of its own, as `CurlTransport`'s: says whether code runs there.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopped = false
  private var thread: pthread_t?

  init() {
    let started = DispatchSemaphore(value: 0)
    let worker = Thread { [self] in
      condition.lock()
      thread = pthread_self()
      condition.unlock()
      started.signal()
      while true {
        condition.lock()
        while jobs.isEmpty, !stopped { condition.wait() }
        if jobs.isEmpty {
          condition.unlock()
          return
        }
        let job = jobs.removeFirst()
        condition.unlock()
        job.runSynchronously(on: asUnownedTaskExecutor())
      }
    }
    worker.start()
    started.wait()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    condition.lock()
    jobs.append(UnownedJob(job))
    condition.signal()
    condition.unlock()
  }

  /// Whether the caller runs on this executor's thread.
  var isCurrent: Bool {
    condition.lock()
    defer { condition.unlock() }
    return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
  }

  /// Ends the thread once its jobs ran.
  func stop() {
    condition.lock()
    stopped = true
    condition.signal()
    condition.unlock()
  }
}

/// A sender that names a task executor, and says for each send whether it ran there.
final class ExecutorSender: ReplaySender {
  let executor: ThreadExecutor?
  private let runs = Mutex<[Bool]>([])

  init(_ executor: ThreadExecutor?) { self.executor = executor }

  var taskExecutor: (any TaskExecutor)? { executor }
  var ranOnExecutor: [Bool] { runs.withLock { $0 } }

  func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer
  {
    let here = ThreadExecutor.isCurrent(executor)
    await Task.yield()  // and again after a suspension: resumed there, not elsewhere
    let after = ThreadExecutor.isCurrent(executor)
    runs.withLock { $0.append(here && after) }
    return .delivered(nil)
  }
}

extension ThreadExecutor {
  /// Whether the caller runs on `executor`'s thread (false for none).
  static func isCurrent(_ executor: ThreadExecutor?) -> Bool { executor?.isCurrent ?? false }
}

/// A sender that holds every send until the test releases it, and counts how many it holds at
/// once: proves how many sends a window has on their way, without timing.
final class GateSender: ReplaySender {
  private struct State {
    var waiting: [CheckedContinuation<Void, Never>] = []
    var inFlight = 0
    var most = 0
    var sent: [RecordKey] = []
    var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }
  private let state = Mutex(State())

  var most: Int { state.withLock { $0.most } }
  var sent: [RecordKey] { state.withLock { $0.sent } }

  func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer
  {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.waiting.append(continuation)
        state.inFlight += 1
        state.most = max(state.most, state.inFlight)
        state.sent.append(entry.key)
        let ready = state.watchers.filter { $0.count <= state.inFlight }.map(\.continuation)
        state.watchers.removeAll { $0.count <= state.inFlight }
        return ready
      }
      ready.forEach { $0.resume() }
    }
    return .delivered(nil)
  }

  /// Waits until `count` sends are held at once.
  func held(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.inFlight >= count { return true }
        state.watchers.append((count, continuation))
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Lets every held send answer.
  func release() {
    let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      defer {
        state.waiting = []
        state.inFlight = 0
      }
      return state.waiting
    }
    waiting.forEach { $0.resume() }
  }
}

/// A server for the in-memory transport that applies `PUT`s with versions, as the reference
/// backend does: 201 for a new id, 200 and the next version on the current `If-Match`, 409
/// otherwise; it logs each record's `If-Match` in the order requests arrive.
final class VersionedServer: Sendable {
  private let state = Mutex<(versions: [String: Int], matches: [String: [String]])>(([:], [:]))

  var matches: [String: [String]] { state.withLock { $0.matches } }
  var versions: [String: Int] { state.withLock { $0.versions } }

  func reply(_ request: HTTPRequest) -> (HTTPResponse, ResponseBody) {
    let id = request.url?.lastPathComponent ?? ""
    let match = request.headerFields[.ifMatch]
    return state.withLock { state in
      state.matches[id, default: []].append(match ?? "-")
      let current = state.versions[id]
      let base = match.flatMap { Int($0.dropFirst(2).dropLast()) }
      guard current == base else {
        return (
          HTTPResponse(status: 409, headerFields: [.contentType: "application/json"]),
          ResponseBody(bytes: Data(#"{"code":"version_conflict","message":"stale"}"#.utf8))
        )
      }
      let version = (current ?? 0) + 1
      state.versions[id] = version
      return (
        HTTPResponse(
          status: current == nil ? 201 : 200, headerFields: [.contentType: "application/json"]),
        ResponseBody(bytes: Data(#"{"id":"\#(id)","t":"x","version":\#(version)}"#.utf8))
      )
    }
  }
}

@Suite("OutboxReplayer", .timeLimit(.minutes(1)))
struct OutboxReplayerTests {
  let transport = InMemoryTransport()
  let store = InMemoryLocalStore()
  let log = SendLog()

  static let notes = CollectionDescription(
    name: "notes", path: "/notes",
    schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
    fields: [], answers: ServerAnswers(versionTagPrefix: "r"))

  var client: APIClient {
    APIClient(
      baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
      transport: LoggingFake(inner: transport, log: log))
  }

  func route(_ collection: CollectionDescription) -> ReplayRoute {
    .records(
      collection, client: client,
      decision: ReplayDecision(policy: .lastWriteWins, collection: collection))
  }

  /// Routes the `uploads` collection of `replayer` to `sender` (manual policy).
  static func registerUploads(_ sender: any ReplaySender, on replayer: OutboxReplayer) {
    replayer.register(
      ReplayRoute(
        collection: "uploads", sender: sender,
        decision: ReplayDecision(
          policy: .manual, collection: CollectionDescription(name: "uploads"))))
  }

  func create(_ collection: String, _ id: String) throws {
    try store.applyAndEnqueue(
      .put(RecordKey(collection: collection, id: id), payload: .object(["t": .string(id)])),
      OutboxOperation(
        key: RecordKey(collection: collection, id: id), kind: .create,
        payload: .object(["t": .string(id)]), baseVersion: nil, enqueuedAt: Date()))
  }

  static func note(_ id: String) -> String {
    #"{"note_id":"\#(id)","t":"\#(id)","rev":1}"#
  }

  static func article(_ id: String) -> String { #"{"id":"\#(id)","t":"\#(id)","version":1}"# }

  @Test("every collection's entries in outbox order, each through its collection's sender")
  func routesInOrder() async throws {
    let replayer = OutboxReplayer(store: store)
    let uploads = ScriptedSender(log: log)
    replayer.register(route(Self.notes))
    replayer.register(route(.articles))
    Self.registerUploads(uploads, on: replayer)
    #expect(replayer.routedCollections == ["articles", "notes", "uploads"])
    try create("notes", "n1")
    try create("articles", "a1")
    try create("uploads", "u1")
    try create("notes", "n2")
    transport.enqueue(status: 201, json: Self.note("n1"))
    transport.enqueue(status: 201, json: Self.article("a1"))
    transport.enqueue(status: 201, json: Self.note("n2"))
    let report = await replayer.replay()
    #expect(report.sent == 4 && report.pending == 0 && report.stoppedBy == nil)
    #expect(log.all == ["notes/n1", "articles/a1", "uploads/u1", "notes/n2"])
    #expect(uploads.sent.map(\.key.id) == ["u1"] && uploads.sent.first?.attempts == 1)
    // Each collection's own request shape: the notes' record and tag, the articles' path.
    #expect(
      transport.requests.map(\.summary) == ["PUT /notes/n1", "PUT /articles/a1", "PUT /notes/n2"])
    #expect(try store.record(RecordKey(collection: "notes", id: "n1"))?.version == 1)
    #expect(try store.pending().isEmpty)
  }

  @Test("a collection without a route waits, with its record's later entries; the rest is sent")
  func unroutedWaits() async throws {
    let replayer = OutboxReplayer(store: store)
    replayer.register(route(.articles))
    try create("uploads", "u1")
    _ = try store.recordAttempt(try #require(try store.pending().first).id)
    // A later entry of the same record (not coalesced: the first was attempted).
    try store.applyAndEnqueue(
      .put(RecordKey(collection: "uploads", id: "u1"), payload: .object(["t": .string("again")])),
      OutboxOperation(
        key: RecordKey(collection: "uploads", id: "u1"), kind: .create,
        payload: .object(["t": .string("again")]), baseVersion: nil, enqueuedAt: Date()))
    try create("articles", "a1")
    transport.enqueue(status: 201, json: Self.article("a1"))
    let report = await replayer.replay()
    #expect(report.sent == 1 && report.withoutSender == 1 && report.pending == 2)
    #expect(report.stoppedBy == nil, "waiting for a sender is not a failure")
    #expect(log.all == ["articles/a1"])
    #expect(try store.pending().map(\.key.collection) == ["uploads", "uploads"])

    let uploads = ScriptedSender(log: log)
    Self.registerUploads(uploads, on: replayer)
    let later = await replayer.replay()
    #expect(later.sent == 2 && later.withoutSender == 0 && later.pending == 0)
    #expect(uploads.sent.map { $0.operation.payload?["t"] } == [.string("u1"), .string("again")])
  }

  @Test(
    "the run loop: a write's request is sent inside it; cancelled, it ends and nothing more is sent"
  )
  func runLoop() async throws {
    let replayer = OutboxReplayer(store: store)
    replayer.register(route(.articles))
    try create("articles", "a1")
    transport.enqueue(status: 201, json: Self.article("a1"))
    let loop = Task { await replayer.run(replayingFirst: true) }
    for await state in replayer.states() where state.pendingCount == 0 && !state.isSyncing {
      if transport.requests.count == 1 { break }
    }
    try create("articles", "a2")
    replayer.noteWrite(.appended(try #require(try store.pending().first)))
    transport.enqueue(status: 201, json: Self.article("a2"))
    replayer.requestReplay()
    for await state in replayer.states() where state.pendingCount == 0 && !state.isSyncing {
      if transport.requests.count == 2 { break }
    }
    #expect(transport.requests.map(\.summary) == ["PUT /articles/a1", "PUT /articles/a2"])
    loop.cancel()
    await loop.value
    // No loop runs: a request is not sent in the background.
    try create("articles", "a3")
    replayer.requestReplay()
    await replayer.waitForIdle()
    #expect(transport.requests.count == 2)
    #expect(try store.pending().map(\.key.id) == ["a3"])
    let report = await replayer.replay()
    #expect(report.sent == 0 && report.stoppedBy != nil, "the in-memory transport has no reply")
  }

  @Test("concurrent: a window's sends go out together, never more than the limit")
  func concurrentWindows() async throws {
    let gate = GateSender()
    let replayer = OutboxReplayer(
      store: store, configuration: OutboxReplayer.Configuration(maxConcurrentSends: 4))
    Self.registerUploads(gate, on: replayer)
    for index in 0..<7 { try create("uploads", "u\(index)") }
    let pass = Task { await replayer.replay() }
    // Windows of 1, 2 and 4 entries (each doubles after a clean one): all of a window at once.
    for size in [1, 2, 4] {
      await gate.held(size)
      gate.release()
    }
    let report = await pass.value
    #expect(report.sent == 7 && report.pending == 0)
    #expect(gate.most == 4)
    #expect(gate.sent.count == 7 && Set(gate.sent).count == 7)
  }

  @Test(
    "a window runs on its senders' task executor, in order or at once; not when senders differ",
    arguments: [1, 3])
  func sendersExecutor(concurrency: Int) async throws {
    let executor = ThreadExecutor()
    defer { executor.stop() }
    let shared = ExecutorSender(executor)
    let replayer = OutboxReplayer(
      store: store, configuration: OutboxReplayer.Configuration(maxConcurrentSends: concurrency))
    Self.registerUploads(shared, on: replayer)
    for index in 0..<6 { try create("uploads", "u\(index)") }
    var report = await replayer.replay()
    #expect(report.sent == 6 && report.pending == 0)
    #expect(shared.ranOnExecutor == Array(repeating: true, count: 6))
    // A window with another sender that names none: it runs where it would anyway.
    let other = ExecutorSender(nil)
    replayer.register(
      ReplayRoute(
        collection: "notes", sender: other,
        decision: ReplayDecision(policy: .manual, collection: CollectionDescription(name: "notes")))
    )
    // Windows of 1 and 2: [u6] alone, then [n0, u7] with both senders.
    try create("uploads", "u6")
    try create("notes", "n0")
    try create("uploads", "u7")
    report = await replayer.replay()
    #expect(report.sent == 3 && report.pending == 0)
    #expect(shared.ranOnExecutor.suffix(2) == [true, false] && other.ranOnExecutor == [false])
  }

  /// A sequential replayer with `sender` for the `uploads` collection.
  func sequentialUploads(_ sender: any ReplaySender) -> OutboxReplayer {
    let replayer = OutboxReplayer(store: store)
    Self.registerUploads(sender, on: replayer)
    return replayer
  }

  func attempts() throws -> [String: Int] {
    Dictionary(uniqueKeysWithValues: try store.pending().map { ($0.key.id, $0.attempts) })
  }

  @Test("pipelined: while a window is on its way, the next is counted; the order stays global")
  func pipelinedWindows() async throws {
    let gate = GateSender()
    let replayer = sequentialUploads(gate)
    for index in 0..<7 { try create("uploads", "u\(index)") }
    let pass = Task { await replayer.replay() }
    // Window 1 (u0): nothing is counted ahead of a window that has not yet ended cleanly.
    await gate.held(1)
    #expect(try attempts() == ["u0": 1, "u1": 0, "u2": 0, "u3": 0, "u4": 0, "u5": 0, "u6": 0])
    gate.release()
    // Window 2 (u1, u2) is on its way: window 3 (u3...u6) is counted meanwhile, not sent.
    await gate.held(1)
    let deadline = ContinuousClock.now + .seconds(30)
    while try attempts()["u6"] != 1 {
      try #require(ContinuousClock.now < deadline, "window 3 was never counted ahead")
      await Task.yield()
    }
    #expect(try attempts() == ["u1": 1, "u2": 1, "u3": 1, "u4": 1, "u5": 1, "u6": 1])
    #expect(gate.sent.map(\.id) == ["u0", "u1"])
    for _ in 0..<6 {
      gate.release()
      if gate.sent.count < 7 { await gate.held(1) }
    }
    gate.release()
    let report = await pass.value
    #expect(report.sent == 7 && report.pending == 0 && report.stoppedBy == nil)
    // One at a time, in the outbox's order, across the windows.
    #expect(gate.sent.map(\.id) == (0..<7).map { "u\($0)" })
  }

  @Test("pipelined: a failure stops the pass; the window counted ahead stays pending, unsent")
  func pipelinedStop() async throws {
    let sender = ScriptedSender(
      log: log, answers: [.delivered(nil), .delivered(nil), .failed(CourierError(.offline))])
    let replayer = sequentialUploads(sender)
    for index in 0..<7 { try create("uploads", "u\(index)") }
    let report = await replayer.replay()
    #expect(report.stoppedBy?.kind == .offline)
    #expect(report.sent == 2)
    // u0 (window 1), u1 then u2's failure (window 2); nothing after the failure was sent.
    #expect(sender.sent.map(\.key.id) == ["u0", "u1", "u2"])
    // Window 3 was counted while window 2 went (decision 1204's cost): pending, attempt 1.
    #expect(try attempts() == ["u2": 1, "u3": 1, "u4": 1, "u5": 1, "u6": 1])
    // The next pass sends them all, in order.
    let again = await replayer.replay()
    #expect(again.sent == 5 && again.pending == 0)
    #expect(sender.sent.map(\.key.id).suffix(5) == ["u2", "u3", "u4", "u5", "u6"])
  }

  @Test(
    "concurrent: every record's writes in order, each on the version the one before made",
    arguments: [1, 3])
  func perRecordOrder(concurrency: Int) async throws {
    let server = VersionedServer()
    for _ in 0..<15 { transport.enqueue(.handler { request in server.reply(request) }) }
    let replayer = OutboxReplayer(
      store: store,
      configuration: OutboxReplayer.Configuration(maxConcurrentSends: concurrency, maxWindow: 4))
    replayer.register(route(.articles))
    // Three edits of each of five records, queued round-robin, each attempted once offline so
    // none is folded into the one before.
    for round in 0..<3 {
      for record in 0..<5 {
        let key = RecordKey(collection: "articles", id: "r\(record)")
        let operation = OutboxOperation(
          key: key, kind: .create, payload: .object(["t": .string("\(round)")]),
          baseVersion: nil, enqueuedAt: Date())
        try store.applyAndEnqueue(
          .put(key, payload: .object(["t": .string("\(round)")])), operation)
        try store.recordAttempt(operation.id)
      }
    }
    let report = await replayer.replay()
    #expect(report.sent == 15 && report.pending == 0 && report.conflicts == 0, "\(report)")
    for record in 0..<5 {
      #expect(server.matches["r\(record)"] == ["-", "\"v1\"", "\"v2\""], "r\(record)")
      #expect(server.versions["r\(record)"] == 3)
    }
    if concurrency == 1 {
      // One at a time, the server saw the outbox's own order.
      let order = transport.requests.map { $0.url?.lastPathComponent ?? "" }
      #expect(order == (0..<3).flatMap { _ in (0..<5).map { "r\($0)" } })
    }
  }
}
