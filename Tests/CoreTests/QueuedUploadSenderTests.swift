import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// `QueuedUploadSender` against servers in memory: tus or multipart by the queued transfer or
/// the endpoint's `OPTIONS`, resumed from the saved offset with progress from there, the proof
/// written before the bytes go, and local problems quarantined.
@Suite("QueuedUploadSender")
struct QueuedUploadSenderTests {
  /// A tus server (at /uploads) and a multipart endpoint (at /photos) in memory.
  final class Server: Transport, Sendable {
    struct State {
      var stored = Data()
      var created = 0
      var requests: [HTTPRequest] = []
      var formBodies: [Data] = []
      var speaksTus = true
      var failPatches = false
      var holdPatches = false
      /// Offers creation-with-upload and keeps what a creation carries.
      var createsWithUpload = false
      var creationBodies: [Data] = []
    }
    let state = Mutex(State())

    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      if request.method == .post, request.url?.path == "/photos" {
        let data = try Self.read(body)
        state.withLock {
          $0.requests.append(request)
          $0.formBodies.append(data)
        }
        return (
          HTTPResponse(status: 201, headerFields: [.contentType: "application/json"]),
          ResponseBody(bytes: Data(#"{"id":"p9","size":3000}"#.utf8))
        )
      }
      return (try await answer(request, body: body, options: options), ResponseBody())
    }

    /// The answers without a body.
    private func answer(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> HTTPResponse
    {
      let (speaksTus, failPatches, hold, withUpload) = state.withLock {
        state -> (Bool, Bool, Bool, Bool) in
        state.requests.append(request)
        return (state.speaksTus, state.failPatches, state.holdPatches, state.createsWithUpload)
      }
      let offset: (Int64) -> HTTPFields = { [.tusResumable: "1.0.0", .uploadOffset: "\($0)"] }
      switch (request.method.rawValue, request.url?.path ?? "") {
      case ("OPTIONS", _):
        return speaksTus
          ? HTTPResponse(
            status: 204,
            headerFields: [
              .tusVersion: "1.0.0",
              .tusExtension: withUpload ? "creation,creation-with-upload" : "creation",
            ])
          : HTTPResponse(status: 405)
      case ("POST", "/uploads"):
        let carried = try Self.read(body)
        let now = state.withLock { state -> Int64 in
          state.created += 1
          state.creationBodies.append(carried)
          state.stored.append(carried)
          return Int64(state.stored.count)
        }
        var headers = offset(now)
        headers[.location] = "http://server/uploads/1"
        return HTTPResponse(status: 201, headerFields: headers)
      case ("HEAD", _):
        return HTTPResponse(
          status: 200, headerFields: offset(Int64(state.withLock { $0.stored.count })))
      case ("PATCH", _):
        if failPatches { throw CourierError(.connectionLost) }
        // A transfer that never ends by itself: only cancellation stops it.
        if hold {
          do { try await Task.sleep(for: .seconds(3600)) } catch { throw CourierError(.cancelled) }
        }
        let from = Int64(request.headerFields[.uploadOffset] ?? "") ?? -1
        let data = try Self.read(body)
        options.progress?(TransferProgress(sent: Int64(data.count), total: Int64(data.count)))
        let now = state.withLock { state -> Int64 in
          if Int64(state.stored.count) == from { state.stored.append(data) }
          return Int64(state.stored.count)
        }
        var headers = offset(now)
        headers[.courierPhotoID] = "photo-1"
        return HTTPResponse(status: 204, headerFields: headers)
      default:
        return HTTPResponse(status: 404)
      }
    }

    static func read(_ body: RequestBody?) throws -> Data {
      guard case .segments(let segments) = body?.contents else { return Data() }
      var data = Data()
      for segment in segments {
        switch segment.contents {
        case .bytes(let bytes): data.append(bytes)
        case .file(let url, let offset, let length):
          let handle = try FileHandle(forReadingFrom: url)
          defer { try? handle.close() }
          try handle.seek(toOffset: UInt64(offset))
          data.append(try handle.read(upToCount: Int(length)) ?? Data())
        }
      }
      return data
    }
  }

  static func upload(_ transfer: QueuedUpload.Transfer, length: Int64) -> QueuedUpload {
    QueuedUpload(
      transfer: transfer, tusEndpoint: transfer == .multipart ? nil : "http://server/uploads",
      formTarget: transfer == .tus ? nil : "http://server/photos", tusConfirmation: .record,
      formConfirmation: .record, title: "Train", fields: [.init(name: "album", value: "2026")],
      filename: "clip.bin", contentType: "application/octet-stream", length: length,
      boundary: "CourierFormBoundary0123456789abcdef0123456789abcdef", source: "/clip.bin",
      verdict: .init(send: .original, reason: .notAnImage, message: ""))
  }

  func sender(_ server: Server, _ store: FolderQueuedUploadStore, attempts: Int = 1)
    -> QueuedUploadSender<ManualClock>
  {
    QueuedUploadSender(
      transport: server, singleAttemptTransport: server,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: attempts, baseDelay: .zero, deadline: nil),
        clock: ManualClock(), random: FixedRandomSource(0)),
      store: store, chunkSize: 1000)
  }

  func entry(_ upload: QueuedUpload, id: String = "u1") -> OutboxEntry {
    OutboxEntry(
      sequence: 1,
      operation: upload.operation(uploadID: id, enqueuedAt: Date(timeIntervalSince1970: 0)))
  }

  @Test("tus: the exact bytes, one creation under the entry's key, the proof before the bytes go")
  func tus() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let data = patternedData(3500)
    try store.put(data, as: "u1")
    let entry = entry(Self.upload(.tus, length: 3500))
    let answer = await sender(server, store).send(entry, progress: nil)
    #expect(answer == .delivered(nil))
    let state = server.state.withLock { $0 }
    #expect(state.stored == data)
    let creation = try #require(state.requests.first { $0.method == .post })
    #expect(creation.headerFields[.idempotencyKey] == entry.id.uuidString.lowercased())
    let metadata = try #require(creation.headerFields[.uploadMetadata])
    #expect(metadata.contains("title \(Data("Train".utf8).base64EncodedString())"))
    #expect(metadata.contains("filename \(Data("clip.bin".utf8).base64EncodedString())"))
    #expect(metadata.contains("album \(Data("2026".utf8).base64EncodedString())"))
    #expect(store.isDelivered("u1"))
    #expect(!FileManager.default.fileExists(atPath: store.body("u1").path))
    #expect(store.records.load("u1") == nil)
    // A replay after a crash before the entry was completed sends nothing again.
    let again = await sender(server, store).send(entry, progress: nil)
    #expect(again == .delivered(nil))
    #expect(server.state.withLock { $0.requests.count } == state.requests.count)
  }

  @Test(
    "bytes after the creation (another server's, decision 2515): an empty creation, then PATCHes",
    arguments: [false, true])
  func bytesAfterCreation(_ after: Bool) async throws {
    let server = Server()
    server.state.withLock { $0.createsWithUpload = true }
    let store = try FolderQueuedUploadStore()
    let data = patternedData(2500)
    try store.put(data, as: "u1")
    var upload = Self.upload(.tus, length: 2500)
    upload.bytesAfterCreation = after
    let answer = await sender(server, store).send(entry(upload), progress: nil)
    #expect(answer == .delivered(nil))
    let state = server.state.withLock { $0 }
    #expect(state.stored == data)
    #expect(state.creationBodies.map(\.count) == [after ? 0 : 1000])
    #expect(state.requests.filter { $0.method == .patch }.count == (after ? 3 : 2))
  }

  @Test("auto: a tus endpoint gets tus; one that is not gets one multipart POST, same bytes")
  func auto() async throws {
    let tusServer = Server()
    let store = try FolderQueuedUploadStore()
    try store.put(patternedData(3000), as: "u1")
    let answer = await sender(tusServer, store).send(
      entry(Self.upload(.auto, length: 3000)), progress: nil)
    #expect(answer == .delivered(nil))
    #expect(tusServer.state.withLock { $0.stored } == patternedData(3000))

    let formServer = Server()
    formServer.state.withLock { $0.speaksTus = false }
    try store.put(patternedData(3000), as: "u2")
    let form = entry(Self.upload(.auto, length: 3000), id: "u2")
    #expect(await sender(formServer, store).send(form, progress: nil) == .delivered(nil))
    let state = formServer.state.withLock { $0 }
    // Not an image (decision 2709): OPTIONS of tus's endpoint only (the draft's form target
    // is not asked), then the form.
    #expect(state.requests.map(\.method) == [.options, .post])
    #expect(state.requests.first?.path == "/uploads")
    let post = try #require(state.requests.last)
    #expect(post.headerFields[.uploadDraftInteropVersion] == "8")
    #expect(post.headerFields[.uploadComplete] == "?1")
    #expect(post.headerFields[.idempotencyKey] == form.id.uuidString.lowercased())
    #expect(
      post.headerFields[.contentType]
        == "multipart/form-data; boundary=CourierFormBoundary0123456789abcdef0123456789abcdef")
    let body = try #require(state.formBodies.first)
    #expect(body.range(of: patternedData(3000)) != nil)
    #expect(body.range(of: Data("name=\"album\"\r\n\r\n2026".utf8)) != nil)
    #expect(store.isDelivered("u2"))
  }

  @Test("a resumed upload: a HEAD, only the rest, progress from the confirmed offset")
  func resumed() async throws {
    let server = Server()
    let data = patternedData(3500)
    server.state.withLock {
      $0.stored = data.prefix(2000)
      $0.created = 1
    }
    let store = try FolderQueuedUploadStore()
    try store.put(data, as: "u1")
    let entry = entry(Self.upload(.auto, length: 3500))
    try store.records.save(
      ResumableUpload(
        endpoint: "http://server/uploads", file: store.body("u1").path, fileSize: 3500,
        fileModified: 0, sha256: "", length: 3500,
        idempotencyKey: entry.id.uuidString.lowercased(),
        uploadURL: "http://server/uploads/1", confirmedOffset: 2000), as: "u1")
    let reports = Mutex<[Int64]>([])
    let answer = await sender(server, store).send(entry) { progress in
      reports.withLock { $0.append(progress.sent) }
    }
    #expect(answer == .delivered(nil))
    let state = server.state.withLock { $0 }
    #expect(state.stored == data)
    #expect(state.created == 1, "no second upload")
    #expect(!state.requests.contains { $0.method == .post })
    let sent = reports.withLock { $0 }
    #expect(sent.first == 2000, "\(sent)")
    #expect(sent == sent.sorted())
    #expect(sent.last == 3500)
  }

  @Test("a transient failure: failed, the bytes and the saved offset kept for the next replay")
  func transient() async throws {
    let server = Server()
    server.state.withLock { $0.failPatches = true }
    let store = try FolderQueuedUploadStore()
    try store.put(patternedData(2500), as: "u1")
    let answer = await sender(server, store).send(
      entry(Self.upload(.tus, length: 2500)), progress: nil)
    guard case .failed(let error) = answer else {
      Issue.record("delivered without the server's proof")
      return
    }
    #expect(error.isTransient)
    #expect(FileManager.default.fileExists(atPath: store.body("u1").path))
    #expect(store.records.load("u1")?.uploadURL == "http://server/uploads/1")
    #expect(!store.isDelivered("u1"))
  }

  @Test("missing or damaged bytes, or a damaged entry: a refusal that quarantines it, no request")
  func localProblems() async throws {
    let server = Server()
    let store = try FolderQueuedUploadStore()
    let missing = await sender(server, store).send(
      entry(Self.upload(.tus, length: 10)), progress: nil)
    #expect(missing.failure?.kind == .business)
    #expect(missing.failure?.code == "upload_bytes_missing")
    try store.put(patternedData(5), as: "u2")
    let short = await sender(server, store).send(
      entry(Self.upload(.tus, length: 10), id: "u2"), progress: nil)
    #expect(short.failure?.code == "upload_bytes_missing")
    var damaged = entry(Self.upload(.tus, length: 10))
    damaged.operation.payload = .object(["transfer": .string("tus")])
    let unreadable = await sender(server, store).send(damaged, progress: nil)
    #expect(unreadable.failure?.kind == .business)
    #expect(unreadable.failure?.code == QueuedUpload.unreadableCode)
    #expect(server.state.withLock { $0.requests.isEmpty })
  }

  @Test("cancelled while sending: failed as cancelled, the bytes kept")
  func cancelled() async throws {
    let server = Server()
    server.state.withLock { $0.holdPatches = true }
    let store = try FolderQueuedUploadStore()
    try store.put(patternedData(2000), as: "u1")
    let sender = sender(server, store)
    let entry = entry(Self.upload(.tus, length: 2000))
    let task = Task { await sender.send(entry, progress: nil) }
    let deadline = ContinuousClock.now + .seconds(120)
    while !server.state.withLock({ $0.requests.contains { $0.method == .patch } }) {
      try #require(ContinuousClock.now < deadline, "the transfer never began")
      try await Task.sleep(for: .milliseconds(5))
    }
    task.cancel()
    let answer = await task.value
    #expect(answer.failure?.kind == .cancelled)
    #expect(!store.isDelivered("u1"))
    #expect(FileManager.default.fileExists(atPath: store.body("u1").path))
  }
}

extension ReplayAnswer {
  /// The error of a failed answer.
  var failure: CourierError? {
    if case .failed(let error) = self { return error }
    return nil
  }
}
