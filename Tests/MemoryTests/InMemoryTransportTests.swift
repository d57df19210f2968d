import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The scripted transport users write their tests with: it must answer in order, record what it
/// was sent, and fail loudly, never silently, when the script runs out.
@Suite("InMemoryTransport")
struct InMemoryTransportTests {
  func get(_ path: String) -> HTTPRequest {
    HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: path)
  }

  func text(_ body: ResponseBody) -> String { String(decoding: body.bytes, as: UTF8.self) }

  @Test("replies are answered in the order they were scripted, then the script is empty")
  func order() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: #"{"n":1}"#)
    transport.enqueue(status: .created, json: #"{"n":2}"#)
    #expect(transport.pendingReplies == 2)
    let (first, firstBody) = try await transport.send(get("/a"), body: nil, options: .init())
    let (second, secondBody) = try await transport.send(get("/b"), body: nil, options: .init())
    #expect(first.status == .ok && text(firstBody) == #"{"n":1}"#)
    #expect(second.status == .created && text(secondBody) == #"{"n":2}"#)
    #expect(first.headerFields[.contentType] == "application/json")
    #expect(transport.pendingReplies == 0)
    #expect(transport.requests.map(\.path) == ["/a", "/b"])
  }

  @Test("a JSON reply keeps a content type given by the test")
  func keepsContentType() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: "[]", headerFields: [.contentType: "application/x-ndjson"])
    let (response, _) = try await transport.send(get("/"), body: nil, options: .init())
    #expect(response.headerFields[.contentType] == "application/x-ndjson")
  }

  @Test("an unscripted request gets a 599 that names it, not an invented success")
  func unscripted() async throws {
    let transport = InMemoryTransport()
    let (response, body) = try await transport.send(get("/missing"), body: nil, options: .init())
    #expect(response.status.code == 599)
    #expect(text(body).contains("/missing"))
  }

  @Test("a scripted failure is thrown as it was given, and the request is still recorded")
  func failure() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(.failure(CourierError(.offline, context: "scripted")))
    await #expect(throws: CourierError.self) {
      _ = try await transport.send(get("/x"), body: nil, options: .init())
    }
    #expect(transport.requests.count == 1)
  }

  @Test("a handler computes the answer from the request it was sent")
  func handler() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      .handler { request in
        (HTTPResponse(status: .accepted), ResponseBody(bytes: Data((request.path ?? "").utf8)))
      })
    let (response, body) = try await transport.send(get("/echo"), body: nil, options: .init())
    #expect(response.status == .accepted)
    #expect(text(body) == "/echo")
  }

  @Test("bodies are recorded as given and as bytes, files and segments read; progress once")
  func bodies() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-memory-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("photo.jpg")
    try Data("0123456789".utf8).write(to: file)

    let transport = InMemoryTransport()
    transport.enqueue(status: .ok)
    transport.enqueue(status: .ok)
    transport.enqueue(status: .ok)
    let reports = Mutex<[TransferProgress]>([])
    var options = TransportOptions()
    options.progress = { progress in reports.withLock { $0.append(progress) } }
    _ = try await transport.send(get("/1"), body: .bytes(Data("abc".utf8)), options: options)
    _ = try await transport.send(get("/2"), body: .file(file), options: .init())
    _ = try await transport.send(
      get("/3"),
      body: .segments([.bytes(Data("<".utf8)), .file(file, offset: 2, length: 3)]),
      options: .init())
    #expect(
      transport.receivedBodies == [Data("abc".utf8), Data("0123456789".utf8), Data("<234".utf8)])
    #expect(transport.uploadedFiles == [file])
    #expect(reports.withLock { $0 } == [TransferProgress(sent: 3, total: 3)])
  }

  @Test("a cancelled caller gets CancellationError and nothing is consumed from the script")
  func cancelled() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok)
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await transport.send(get("/late"), body: nil, options: .init())
    }
    await #expect(throws: CancellationError.self) { _ = try await task.value }
    #expect(transport.pendingReplies == 1)
    #expect(transport.requests.isEmpty)
  }
}
