import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The replay's senders of other collections (queued uploads), registered as routes on the
/// store's `OutboxReplayer`: their entries go through them, in outbox order with the JSON
/// writes, and what they answer is carried out as any answer.
@Suite("SyncEngine: senders of other collections")
struct SyncEngineSenderTests {
  /// What went out, in order, across the sender and the transport.
  final class Sends: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ line: String) { list.withLock { $0.append(line) } }
    var all: [String] { list.withLock { $0 } }
  }

  /// A sender that records the entries it is handed and answers from a script.
  final class ScriptedSender: ReplaySender, Sendable {
    let answers = Mutex<[ReplayAnswer]>([])
    let sent = Mutex<[RecordKey]>([])
    let order: Sends

    init(_ answers: [ReplayAnswer], order: Sends) {
      self.answers.withLock { $0 = answers }
      self.order = order
    }

    func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
      -> ReplayAnswer
    {
      sent.withLock { $0.append(entry.key) }
      order.append("upload \(entry.key.id)")
      return answers.withLock { $0.isEmpty ? .delivered(nil) : $0.removeFirst() }
    }
  }

  /// A transport that notes the order of the JSON writes.
  final class OrderedTransport: Transport, Sendable {
    let base = InMemoryTransport()
    let order: Sends
    init(order: Sends) { self.order = order }
    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      order.append("\(request.method.rawValue) \(request.url?.path ?? "")")
      return try await base.send(request, body: body, options: options)
    }
  }

  let store = InMemoryLocalStore()
  let order = Sends()

  func engine(_ sender: ScriptedSender, transport: OrderedTransport) -> SyncEngine<Article> {
    let engine = SyncEngine<Article>(
      client: APIClient(
        baseURL: URL(string: "http://courier.test") ?? URL(fileURLWithPath: "/"),
        transport: transport),
      store: store)
    // The store's one replayer sends the uploads' entries through their collection's route.
    engine.replayer.register(
      ReplayRoute(
        collection: "uploads", sender: sender, decision: ReplayDecision(policy: .lastWriteWins)))
    return engine
  }

  func queueUpload(_ id: String) throws {
    try store.enqueue(
      OutboxOperation(
        key: RecordKey(collection: "uploads", id: id), kind: .create,
        payload: .object(["any": .string("payload")]), baseVersion: nil, enqueuedAt: Date()))
  }

  static func article(_ id: String) -> String {
    #"{"id":"\#(id)","title":"t","body":"","version":1}"#
  }

  @Test("uploads and articles go in outbox order; a delivered upload leaves the outbox")
  func order() async throws {
    let transport = OrderedTransport(order: order)
    let sender = ScriptedSender([], order: order)
    let engine = engine(sender, transport: transport)
    try queueUpload("u1")
    try await engine.create(Article(id: "a1", title: "t", body: ""))
    try queueUpload("u2")
    transport.base.enqueue(status: 201, json: Self.article("a1"))
    let report = await engine.replay()
    #expect(report.sent == 3)
    #expect(report.pending == 0)
    #expect(order.all == ["upload u1", "PUT /articles/a1", "upload u2"])
    #expect(try store.entries().isEmpty)
    #expect(sender.sent.withLock { $0.count } == 2)
    #expect(engine.state.pendingCount == 0)
  }

  @Test("a refused upload is quarantined and the replay goes on; a transient failure stops it")
  func refusedThenTransient() async throws {
    let transport = OrderedTransport(order: order)
    let refusal = CourierError(
      .business, status: 422, code: "validation_failed", serverMessage: "No title.")
    let answers: [ReplayAnswer] = [.failed(refusal), .failed(CourierError(.connectionLost))]
    let sender = ScriptedSender(answers, order: order)
    let engine = engine(sender, transport: transport)
    try queueUpload("u1")
    try queueUpload("u2")
    try queueUpload("u3")
    let report = await engine.replay()
    #expect(report.rejected == 1)
    #expect(report.stoppedBy?.kind == .connectionLost)
    #expect(report.pending == 2)
    let entries = try store.entries()
    #expect(entries.map(\.key.id) == ["u1", "u2", "u3"])
    #expect(entries[0].state == .rejected(message: "No title.", code: "validation_failed"))
    #expect(entries[1].state == .pending && entries[1].attempts == 1)
    // Not sent after the transient stop; its attempt may have been counted with its window's
    // (decision 1204: counted before the window's first send, at most one too many).
    #expect(sender.sent.withLock { $0.map(\.id) } == ["u1", "u2"])
    #expect(entries[2].state == .pending && entries[2].attempts <= 1)
    #expect(transport.base.requests.isEmpty, "no upload went out as a JSON request")
  }
}
