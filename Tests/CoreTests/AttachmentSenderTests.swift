import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The compound write's state machine (decision 2520) against servers in memory: the file part
/// before the record part, the server's reference in the record, the reference kept so a replay
/// sends no second file, a refused file that keeps the record from being sent, and a refused
/// record that keeps its stored file (decision 2522).
@Suite("AttachmentSender")
struct AttachmentSenderTests {
  /// The queued-upload test server (tus at /uploads, multipart at /photos) plus articles:
  /// `PUT /articles/{id}` answers the record (version 1), or 422 when told to.
  final class Server: Transport, Sendable {
    let files = QueuedUploadSenderTests.Server()
    struct State {
      var puts: [JSONValue] = []
      var refuseRecord = false
      var order: [String] = []
    }
    let state = Mutex(State())

    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      let path = request.url?.path ?? ""
      state.withLock { $0.order.append("\(request.method.rawValue) \(path)") }
      guard request.method == .put, path.hasPrefix("/articles/") else {
        return try await files.send(request, body: body, options: options)
      }
      guard case .bytes(let data) = body?.contents else { throw CourierError(.decoding) }
      let sent = try JSONValue(parsing: data)
      let refuse = state.withLock { state -> Bool in
        state.puts.append(sent)
        return state.refuseRecord
      }
      if refuse {
        return (
          HTTPResponse(status: 422, headerFields: [.contentType: "application/json"]),
          ResponseBody(
            bytes: Data(
              #"{"code":"validation_failed","message":"Not this title.","field":"title"}"#.utf8))
        )
      }
      guard case .object(var members) = sent else { throw CourierError(.decoding) }
      members["id"] = .string(String(path.dropFirst("/articles/".count)))
      members["version"] = .integer(1)
      members["updated_at"] = .string("2026-01-01T00:00:00Z")
      return (
        HTTPResponse(status: 201, headerFields: [.contentType: "application/json"]),
        ResponseBody(bytes: Data(JSONValue.object(members).jsonText.utf8))
      )
    }
  }

  func sender(_ server: Server, _ store: FolderQueuedUploadStore) -> AttachmentSender<ManualClock> {
    let base = URL(string: "http://server") ?? URL(fileURLWithPath: "/")
    let client = APIClient(baseURL: base, transport: server)
    return AttachmentSender(
      records: RecordSender(client: client, collection: .articles),
      files: QueuedUploadSender(
        transport: server, singleAttemptTransport: server,
        executor: RetryExecutor(
          policy: RetryPolicy(maxAttempts: 1, baseDelay: .zero, deadline: nil),
          clock: ManualClock(), random: FixedRandomSource(0)),
        store: store, chunkSize: 1000))
  }

  /// A compound write of article a1 whose photo is kept as `u1`, described as `transfer`.
  func compound(
    _ store: FolderQueuedUploadStore, transfer: QueuedUpload.Transfer = .tus,
    operation: UUID = UUID()
  ) throws -> OutboxEntry {
    try store.put(patternedData(3000), as: "u1")
    try store.writeNote(
      QueuedUploadSenderTests.upload(transfer, length: 3000).payload.jsonText, "part", for: "u1")
    let payload: JSONValue = .object([
      "title": .string("Sunset"), "body": .string(""), "photo": .string(Attachment.local("u1")),
    ])
    return OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        id: operation, key: RecordKey(collection: "articles", id: "a1"), kind: .create,
        payload: payload, baseVersion: nil, enqueuedAt: Date(timeIntervalSince1970: 0)))
  }

  @Test(
    "the file first (tus, keyed by the operation), then the record naming the server's photo",
    arguments: [QueuedUpload.Transfer.tus, .multipart])
  func fileThenRecord(_ transfer: QueuedUpload.Transfer) async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let operation = UUID()
    let entry = try compound(store, transfer: transfer, operation: operation)
    let answer = await sender(server, store).send(entry, progress: nil)
    guard case .delivered(let record?) = answer else {
      Issue.record("not delivered: \(answer)")
      return
    }
    let reference = transfer == .tus ? "photo-1" : "p9"
    #expect(record.payload["photo"] == .string(reference))
    let puts = server.state.withLock { $0.puts }
    #expect(puts.count == 1)
    #expect(puts.first?["photo"] == .string(reference))
    let order = server.state.withLock { $0.order }
    let firstPut = try #require(order.firstIndex { $0.hasPrefix("PUT") })
    #expect(firstPut == order.count - 1, "\(order)")
    // The file's key is the operation's and the field's, the record's the operation's.
    let fileKeys = server.files.state.withLock { $0.requests }.compactMap {
      $0.headerFields[.idempotencyKey]
    }
    #expect(
      fileKeys.contains(AttachmentSender<ManualClock>.fileKey(entry.operation, field: "photo")))
    #expect(fileKeys.allSatisfy { $0 == "\(operation.uuidString.lowercased()).photo" })
    #expect(store.note("ref", for: "u1") == reference)
    #expect(store.isDelivered("u1"))
    #expect(!FileManager.default.fileExists(atPath: store.body("u1").path))
  }

  @Test("a file part's transfer is followed by attachment id: began, progressed, ended")
  func fileProgress() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let entry = try compound(store)
    let events = Mutex<[String]>([])
    var sender = sender(server, store)
    sender.fileProgress = AttachmentSender.FileProgress(
      began: { id in events.withLock { $0.append("began \(id)") } },
      progressed: { id, sent in events.withLock { $0.append("\(id) \(sent.sent)") } },
      ended: { id in events.withLock { $0.append("ended \(id)") } })
    _ = await sender.send(entry, progress: nil)
    let seen = events.withLock { $0 }
    #expect(seen.first == "began u1")
    #expect(seen.last == "ended u1")
    #expect(seen.contains("u1 3000"), "\(seen)")
  }

  @Test("a replay after the file was stored sends no second file, only the record")
  func replayAfterFile() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let entry = try compound(store)
    server.state.withLock { $0.refuseRecord = true }
    _ = await sender(server, store).send(entry, progress: nil)
    let created = server.files.state.withLock { $0.created }
    #expect(created == 1)
    server.state.withLock { $0.refuseRecord = false }
    let answer = await sender(server, store).send(entry, progress: nil)
    guard case .delivered = answer else {
      Issue.record("not delivered: \(answer)")
      return
    }
    #expect(server.files.state.withLock { $0.created } == 1, "a second file was made")
    #expect(
      server.state.withLock { $0.puts }.map { $0["photo"] } == [
        .string("photo-1"), .string("photo-1"),
      ])
  }

  @Test("a refused record keeps its stored file and says the server's words")
  func refusedRecordKeepsFile() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let entry = try compound(store)
    server.state.withLock { $0.refuseRecord = true }
    let answer = await sender(server, store).send(entry, progress: nil)
    guard case .failed(let error) = answer else {
      Issue.record("not refused: \(answer)")
      return
    }
    #expect(error.kind == .business)
    #expect(error.serverMessage == "Not this title.")
    #expect(store.note("ref", for: "u1") == "photo-1")
  }

  @Test("a refused file refuses the entry and the record is never sent")
  func refusedFile() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let entry = try compound(store)
    // The kept bytes are gone: a local refusal, as a server's 4xx is.
    try FileManager.default.removeItem(at: store.body("u1"))
    let answer = await sender(server, store).send(entry, progress: nil)
    guard case .failed(let error) = answer else {
      Issue.record("not refused: \(answer)")
      return
    }
    #expect(error.kind == .business)
    #expect(server.state.withLock { $0.puts }.isEmpty)
    #expect(store.note("ref", for: "u1") == nil)
  }

  @Test("an entry without a local reference goes to the record sender as it is")
  func plainRecord() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let entry = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: RecordKey(collection: "articles", id: "a2"), kind: .create,
        payload: .object(["title": .string("Plain"), "body": .string(""), "photo": .string("p7")]),
        baseVersion: nil, enqueuedAt: Date(timeIntervalSince1970: 0)))
    let answer = await sender(server, store).send(entry, progress: nil)
    guard case .delivered = answer else {
      Issue.record("not delivered: \(answer)")
      return
    }
    #expect(server.state.withLock { $0.order } == ["PUT /articles/a2"])
  }

  @Test("Attachment: local references found, substituted, and told from the server's")
  func references() {
    let payload: JSONValue = .object([
      "photo": .string("courier-local:abc"), "cover": .string("p1"), "title": .string("t"),
    ])
    let pending = Attachment.pending(in: payload, fields: ["cover", "photo"])
    #expect(pending.map(\.field) == ["photo"])
    #expect(pending.map(\.id) == ["abc"])
    #expect(Attachment.localID(.string("courier-local:")) == nil)
    #expect(Attachment.substituting(payload, ["photo": "p2"])["photo"] == .string("p2"))
    let part = AttachmentPart(
      field: "photo", id: "abc", confirmed: 400, total: 1000, reference: nil)
    #expect(part.text == "photo uploading 40%")
    #expect(
      AttachmentPart(field: "photo", id: "abc", confirmed: 0, total: 10, reference: "p").state
        == .stored)
  }
}
