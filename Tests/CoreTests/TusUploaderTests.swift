import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Synchronization
import Testing

/// `TusUploader` against a tus server in memory: chunks are file ranges (memory stays flat),
/// a retry resumes with a HEAD, and a new uploader with the same record store resumes too.
@Suite("TusUploader")
struct TusUploaderTests {
  /// A tus server in memory, reading each body from its file range as an adapter would.
  final class FakeTus: Transport, Sendable {
    struct State {
      var stored = Data()
      var length: Int64 = 0
      var created = 0
      var bodies: [RequestBody] = []
      var methods: [String] = []
      var dropPatchesFrom: Int64?
      var dropOnce = false
    }
    let state = Mutex(State())

    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> HTTPResponse
    {
      let method = request.method.rawValue
      state.withLock { $0.methods.append(method) }
      let headers: (Int64) -> HTTPHeaders = { offset in
        ["Tus-Resumable": "1.0.0", "Upload-Offset": String(offset)]
      }
      switch method {
      case "OPTIONS":
        return HTTPResponse(
          status: 204, headers: ["Tus-Version": "1.0.0", "Tus-Extension": "creation"])
      case "POST":
        state.withLock {
          $0.created += 1
          $0.length = Int64(request.headers["Upload-Length"] ?? "") ?? -1
        }
        var answer = headers(0)
        answer["Location"] = "/files/1"
        return HTTPResponse(status: 201, headers: answer)
      case "HEAD":
        let offset = state.withLock { Int64($0.stored.count) }
        return HTTPResponse(status: 200, headers: headers(offset))
      case "PATCH":
        let from = Int64(request.headers["Upload-Offset"] ?? "") ?? -1
        let drop = state.withLock { state -> Bool in
          if let body { state.bodies.append(body) }
          let drop = state.dropPatchesFrom.map { from >= $0 } ?? false
          if drop && state.dropOnce { state.dropPatchesFrom = nil }
          return drop
        }
        if drop { throw CourierError(.connectionLost) }
        guard case .segments(let segments) = body, segments.count == 1,
          case .file(let url, let offset, let length) = segments[0]
        else { return HTTPResponse(status: 400) }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.read(upToCount: Int(length)) ?? Data()
        options.progress?(TransferProgress(sent: Int64(data.count), total: length))
        let (now, total) = state.withLock { state -> (Int64, Int64) in
          if Int64(state.stored.count) == from { state.stored.append(data) }
          return (Int64(state.stored.count), state.length)
        }
        _ = total
        return HTTPResponse(status: 204, headers: headers(now))
      default:
        return HTTPResponse(status: 405)
      }
    }
  }

  final class MemoryStore: ResumableUploadStore, Sendable {
    let records = Mutex<[String: ResumableUpload]>([:])
    func load(_ key: String) -> ResumableUpload? { records.withLock { $0[key] } }
    func save(_ record: ResumableUpload, as key: String) throws {
      records.withLock { $0[key] = record }
    }
    func remove(_ key: String) { _ = records.withLock { $0.removeValue(forKey: key) } }
  }

  func file(_ size: Int) throws -> (URL, Data) {
    let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) })
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-tus-\(UUID()).bin")
    try data.write(to: url)
    return (url, data)
  }

  func uploader(_ server: FakeTus, store: MemoryStore, attempts: Int) -> TusUploader<ManualClock> {
    TusUploader(
      transport: server,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: attempts, baseDelay: .zero, deadline: nil),
        clock: ManualClock(), random: FixedRandomSource(0)),
      compressor: InMemoryImageCompressor(info: nil), store: store, chunkSize: 1000)
  }

  func request(_ url: URL) -> UploadRequest {
    UploadRequest(
      file: url, target: URL(string: "http://server/files/") ?? url, compress: false,
      confirmation: .status)
  }

  @Test("chunks are file ranges of at most the chunk size; the server gets the exact bytes")
  func chunks() async throws {
    let server = FakeTus()
    let store = MemoryStore()
    let (url, data) = try file(3500)
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try await uploader(server, store: store, attempts: 1).perform(
      request(url), onState: { _ in })
    let state = server.state.withLock { $0 }
    #expect(state.stored == data)
    #expect(state.bodies.count == 4)
    for body in state.bodies {
      guard case .segments(let segments) = body, case .file(_, _, let length) = segments[0]
      else {
        Issue.record("a chunk was not a file range")
        continue
      }
      #expect(length <= 1000)
    }
    #expect(result.resumedAt == 0)
    #expect(result.uploadURL?.absoluteString == "http://server/files/1")
    #expect(store.records.withLock { $0.isEmpty })
  }

  @Test("in one run, a dropped connection is retried with a HEAD, then only the rest")
  func retryInRun() async throws {
    let server = FakeTus()
    server.state.withLock {
      $0.dropPatchesFrom = 1000
      $0.dropOnce = true
    }
    let (url, data) = try file(2500)
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try await uploader(server, store: MemoryStore(), attempts: 3).perform(
      request(url), onState: { _ in })
    #expect(server.state.withLock { $0.stored } == data)
    #expect(
      server.state.withLock { $0.methods }
        == ["OPTIONS", "POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH"])
    #expect(result.response.attempts == 2)
    // The result says where the attempt that completed it resumed, not where the run began.
    #expect(result.resumedAt == 1000)
  }

  @Test("a new run with the same record store resumes: HEAD, only the rest, progress from there")
  func retryResumes() async throws {
    let server = FakeTus()
    server.state.withLock { $0.dropPatchesFrom = 2000 }
    let store = MemoryStore()
    let (url, data) = try file(3500)
    defer { try? FileManager.default.removeItem(at: url) }
    // The first run gives up (one attempt) with the record kept.
    await #expect(throws: CourierError.self) {
      _ = try await uploader(server, store: store, attempts: 1).perform(
        request(url), onState: { _ in })
    }
    #expect(store.records.withLock { $0.count } == 1)
    server.state.withLock { $0.dropPatchesFrom = nil }
    let states = Mutex<[UploadState]>([])
    let resumes = Mutex<[Int64]>([])
    let result = try await uploader(server, store: store, attempts: 1).perform(
      request(url), onState: { state in states.withLock { $0.append(state) } },
      onResume: { offset, _ in resumes.withLock { $0.append(offset) } })
    #expect(server.state.withLock { $0.stored } == data)
    #expect(server.state.withLock { $0.created } == 1, "one upload for the whole life")
    #expect(resumes.withLock { $0 } == [2000])
    #expect(result.resumedAt == 2000)
    let sent = states.withLock { $0 }.compactMap { state -> Int64? in
      if case .uploading(let sent, _) = state { return sent }
      return nil
    }
    #expect(sent.first == 2000)
    #expect(sent == sent.sorted())
    #expect(store.records.withLock { $0.isEmpty })
  }
}
