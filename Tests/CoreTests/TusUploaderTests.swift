import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

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
      /// Answers to give `OPTIONS` first, in order (then the tus one); a nil throws
      /// `connectionLost`.
      var optionsAnswers: [(HTTPResponse, ResponseBody)?] = []
    }
    let state = Mutex(State())

    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      state.withLock { $0.methods.append(request.method.rawValue) }
      if request.method == .options, let scripted = nextOptionsAnswer() {
        guard let answer = scripted else { throw CourierError(.connectionLost) }
        return answer
      }
      return (try answer(request, body: body, options: options), ResponseBody())
    }

    /// The next scripted `OPTIONS` answer: `.none` when none is left.
    private func nextOptionsAnswer() -> (HTTPResponse, ResponseBody)?? {
      state.withLock { state in
        state.optionsAnswers.isEmpty ? .none : .some(state.optionsAnswers.removeFirst())
      }
    }

    /// The tus server's answers, without a body.
    private func answer(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      throws -> HTTPResponse
    {
      let method = request.method.rawValue
      let headers: (Int64) -> HTTPFields = { offset in
        [.tusResumable: "1.0.0", .uploadOffset: String(offset)]
      }
      switch method {
      case "OPTIONS":
        return HTTPResponse(
          status: 204, headerFields: [.tusVersion: "1.0.0", .tusExtension: "creation"])
      case "POST":
        state.withLock {
          $0.created += 1
          $0.length = Int64(request.headerFields[.uploadLength] ?? "") ?? -1
          // A new upload starts empty.
          $0.stored = Data()
        }
        var answer = headers(0)
        answer[.location] = "/files/1"
        return HTTPResponse(status: 201, headerFields: answer)
      case "HEAD":
        let offset = state.withLock { Int64($0.stored.count) }
        return HTTPResponse(status: 200, headerFields: headers(offset))
      case "PATCH":
        let from = Int64(request.headerFields[.uploadOffset] ?? "") ?? -1
        let drop = state.withLock { state -> Bool in
          if let body { state.bodies.append(body) }
          let drop = state.dropPatchesFrom.map { from >= $0 } ?? false
          if drop && state.dropOnce { state.dropPatchesFrom = nil }
          return drop
        }
        if drop { throw CourierError(.connectionLost) }
        guard case .segments(let segments) = body?.contents, segments.count == 1,
          case .file(let url, let offset, let length) = segments[0].contents
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
        return HTTPResponse(status: 204, headerFields: headers(now))
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

  /// A `FileHasher` that counts what it was asked to hash.
  final class CountingHasher: FileHasher, Sendable {
    let bytes = Mutex<Int64>(0)
    func sha256(of file: URL, offset: Int64, length: Int64) throws -> [UInt8] {
      bytes.withLock { $0 += length }
      return try SwiftFileHasher().sha256(of: file, offset: offset, length: length)
    }
  }

  func uploader(
    _ server: FakeTus, store: MemoryStore, attempts: Int,
    hasher: any FileHasher = SwiftFileHasher(),
    clock: any WallClock = SystemWallClock()
  ) -> TusUploader<ManualClock> {
    TusUploader(
      transport: server,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: attempts, baseDelay: .zero, deadline: nil),
        clock: ManualClock(), random: FixedRandomSource(0)),
      compressor: InMemoryImageCompressor(info: nil), store: store, chunkSize: 1000,
      hasher: hasher, wallClock: clock)
  }

  /// A wall clock an hour after the file's last change: its times vouch for it.
  func later(than url: URL) throws -> FixedWallClock {
    let changed = try #require(
      (try FileManager.default.attributesOfItem(atPath: url.path))[.modificationDate] as? Date)
    return FixedWallClock(instant: changed.addingTimeInterval(3600))
  }

  /// The file's status (for its times in nanoseconds).
  func status(_ url: URL) -> stat {
    var info = stat()
    _ = stat(url.path, &info)
    return info
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
      guard case .segments(let segments) = body.contents,
        case .file(_, _, let length) = segments[0].contents
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
    #expect(result.attempts == 2)
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
      if case .uploading(let sent, _) = state.phase { return sent }
      return nil
    }
    #expect(sent.first == 2000)
    #expect(sent == sent.sorted())
    #expect(store.records.withLock { $0.isEmpty })
  }

  @Test("a portal's page for OPTIONS stops the upload before any creation or byte")
  func portalAnswersOptions() async throws {
    let server = FakeTus()
    server.state.withLock {
      $0.optionsAnswers = [
        (
          HTTPResponse(status: 200, headerFields: [.contentType: "text/html"]),
          ResponseBody(bytes: Data("<html>Welcome to the train's Wi-Fi</html>".utf8))
        )
      ]
    }
    let (url, _) = try file(2500)
    defer { try? FileManager.default.removeItem(at: url) }
    await #expect {
      _ = try await uploader(server, store: MemoryStore(), attempts: 3).perform(
        request(url), onState: { _ in })
    } throws: { error in
      (error as? CourierError)?.kind == .notTheServer
        && (error as? CourierError)?.code == "tus_options_not_tus"
    }
    // Not retried (not the server), and nothing else was sent.
    #expect(server.state.withLock { $0.methods } == ["OPTIONS"])
  }

  @Test("a failed OPTIONS (503, then a lost connection) is retried like any attempt")
  func optionsRetried() async throws {
    let server = FakeTus()
    server.state.withLock {
      $0.optionsAnswers = [(HTTPResponse(status: 503), ResponseBody()), nil]
    }
    let (url, data) = try file(1500)
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try await uploader(server, store: MemoryStore(), attempts: 3).perform(
      request(url), onState: { _ in })
    #expect(server.state.withLock { $0.stored } == data)
    #expect(
      server.state.withLock { $0.methods }
        == ["OPTIONS", "OPTIONS", "OPTIONS", "POST", "PATCH", "PATCH"])
    #expect(result.attempts == 3)
  }

  @Test("OPTIONS answered once is not asked again when an attempt is retried")
  func optionsOncePerRun() async throws {
    let server = FakeTus()
    server.state.withLock {
      $0.dropPatchesFrom = 1000
      $0.dropOnce = true
    }
    let (url, _) = try file(2500)
    defer { try? FileManager.default.removeItem(at: url) }
    _ = try await uploader(server, store: MemoryStore(), attempts: 3).perform(
      request(url), onState: { _ in })
    #expect(server.state.withLock { $0.methods.filter { $0 == "OPTIONS" }.count } == 1)
  }

  @Test("an untouched file resumes on its identity alone: not one byte is hashed")
  func identityWithoutHash() async throws {
    let server = FakeTus()
    server.state.withLock { $0.dropPatchesFrom = 2000 }
    let store = MemoryStore()
    let (url, data) = try file(3500)
    defer { try? FileManager.default.removeItem(at: url) }
    let hasher = CountingHasher()
    let clock = try later(than: url)
    await #expect(throws: CourierError.self) {
      _ = try await uploader(server, store: store, attempts: 1, hasher: hasher, clock: clock)
        .perform(request(url), onState: { _ in })
    }
    let saved = try #require(store.records.withLock { $0.values.first })
    #expect(saved.sha256.isEmpty)
    #expect(saved.fileIdentity?.size == 3500)
    server.state.withLock { $0.dropPatchesFrom = nil }
    let result = try await uploader(
      server, store: store, attempts: 1, hasher: hasher, clock: clock
    ).perform(request(url), onState: { _ in })
    #expect(result.resumedAt == 2000)
    #expect(server.state.withLock { $0.stored } == data)
    #expect(hasher.bytes.withLock { $0 } == 0)
  }

  @Test("a file changed just before the upload is hashed too, and resumes on the hash")
  func racyFileIsHashed() async throws {
    let server = FakeTus()
    server.state.withLock { $0.dropPatchesFrom = 2000 }
    let store = MemoryStore()
    let (url, data) = try file(3500)
    defer { try? FileManager.default.removeItem(at: url) }
    let hasher = CountingHasher()
    // The clock at the file's own change: a write in the same tick could follow unseen.
    let changed = status(url).st_ctim
    let clock = FixedWallClock(
      instant: Date(
        timeIntervalSince1970: Double(changed.tv_sec) + Double(changed.tv_nsec) / 1e9))
    await #expect(throws: CourierError.self) {
      _ = try await uploader(server, store: store, attempts: 1, hasher: hasher, clock: clock)
        .perform(request(url), onState: { _ in })
    }
    #expect(store.records.withLock { $0.values.first?.sha256.isEmpty } == false)
    server.state.withLock { $0.dropPatchesFrom = nil }
    let result = try await uploader(
      server, store: store, attempts: 1, hasher: hasher, clock: clock
    ).perform(request(url), onState: { _ in })
    #expect(result.resumedAt == 2000)
    #expect(server.state.withLock { $0.stored } == data)
    #expect(hasher.bytes.withLock { $0 } == 2 * 3500, "hashed once in each run")
  }

  @Test("rewritten in place with the same size and its modification time put back: starts over")
  func rewrittenInPlaceStartsOver() async throws {
    let server = FakeTus()
    server.state.withLock { $0.dropPatchesFrom = 2000 }
    let store = MemoryStore()
    let (url, _) = try file(3500)
    defer { try? FileManager.default.removeItem(at: url) }
    let hasher = CountingHasher()
    let clock = try later(than: url)
    await #expect(throws: CourierError.self) {
      _ = try await uploader(server, store: store, attempts: 1, hasher: hasher, clock: clock)
        .perform(request(url), onState: { _ in })
    }
    let before = status(url)
    // Other bytes, written over the old ones (no truncation, same size), until the kernel's
    // clock has moved on from the first write (it ticks every few milliseconds).
    let other = Data((0..<3500).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
    let deadline = ContinuousClock.now + .seconds(60)
    repeat {
      let handle = try FileHandle(forWritingTo: url)
      try handle.write(contentsOf: other)
      try handle.close()
    } while status(url).st_ctim.tv_nsec == before.st_ctim.tv_nsec
      && status(url).st_ctim.tv_sec == before.st_ctim.tv_sec && ContinuousClock.now < deadline
    var times = [before.st_atim, before.st_mtim]
    #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
    let after = status(url)
    #expect(after.st_size == before.st_size)
    #expect(
      after.st_mtim.tv_sec == before.st_mtim.tv_sec
        && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec, "the modification time put back")
    server.state.withLock { $0.dropPatchesFrom = nil }
    let result = try await uploader(
      server, store: store, attempts: 1, hasher: hasher, clock: try later(than: url)
    ).perform(request(url), onState: { _ in })
    #expect(result.resumedAt == 0, "started over")
    #expect(server.state.withLock { $0.created } == 2, "a new upload")
    #expect(server.state.withLock { $0.stored } == other, "the new bytes, not a mix")
    #expect(server.state.withLock { $0.methods.contains("DELETE") }, "the old one freed")
    #expect(hasher.bytes.withLock { $0 } == 0, "the identity alone told the change")
  }
}
