import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

@Suite("MultipartBody")
struct MultipartBodyTests {
  @Test("an in-memory body is sent as bytes, with its Content-Type")
  func sendInMemory() async throws {
    let layout = try MultipartForm([.text("title", "x")]).layout()
    let body = try await MultipartBodyWriter().makeBody(layout)
    let transport = InMemoryTransport()
    transport.enqueue(status: 201)
    let request = HTTPRequest(
      method: .post, url: URL(string: "http://127.0.0.1:1/photos")!,
      headerFields: [.named("X-A"): "1"])
    let progress = Mutex<[TransferProgress]>([])
    let options = TransportOptions(progress: { value in progress.withLock { $0.append(value) } })
    let (response, _) = try await body.send(request, through: transport, options: options)
    #expect(response.status == 201)
    let sent = try #require(transport.requests.first)
    #expect(transport.bodies.first == .bytes(layout.inMemoryBody ?? Data()))
    #expect(sent.headerFields[.contentType] == layout.contentType)
    #expect(sent.headerFields[.named("X-A")] == "1")
    #expect(transport.uploadedFiles.isEmpty)
    #expect(
      progress.withLock { $0 } == [
        TransferProgress(sent: layout.contentLength, total: layout.contentLength)
      ])
  }

  @Test("a file body is sent as a file, streamed by the transport")
  func sendFromFile() async throws {
    let scratch = try ScratchDirectory()
    let source = try scratch.file("big.bin", patternBytes(50_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: scratch.url, inMemoryThreshold: 1000)
    let transport = InMemoryTransport()
    transport.enqueue(status: 201)
    let request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:1/photos")!)
    let status = try await writer.withBody(layout) { body in
      try await body.send(request, through: transport).0.status
    }
    #expect(status == 201)
    let uploaded = try #require(transport.uploadedFiles.first)
    #expect(uploaded.lastPathComponent.hasPrefix("courier-multipart-"))
    #expect(transport.bodies.first == .file(uploaded))
    #expect(transport.requests.first?.headerFields[.contentType] == layout.contentType)
    #expect(!FileManager.default.fileExists(atPath: uploaded.path))
  }
}
