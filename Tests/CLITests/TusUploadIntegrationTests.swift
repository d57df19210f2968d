import CourierCLI
import CourierDomain
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `courier upload --resumable` (tus 1.0.0) against the reference backend's `/uploads`: real
/// processes and sockets, the backend's chaos hooks for hostile answers, `kill -9` for a
/// resume in a new process (decision 1301).
@Suite("courier upload --resumable against the reference backend", .serialized, .sharedBackend)
struct TusUploadIntegrationTests {
  static let chunk = 4 * 1024 * 1024

  func run(
    _ backend: ReferenceBackend, _ arguments: [String], dataDir: URL
  ) async -> CLIRun {
    await InProcessCLI.run(
      backend.url.absoluteString, arguments, dataDir: dataDir,
      environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])
  }

  /// A logged-in client folder.
  func client(_ backend: ReferenceBackend) async throws -> URL {
    let dir = try InProcessCLI.temporaryDirectory("courier-tus-it")
    let login = await run(
      backend, ["login", "--username", "alice", "--password", "secret"], dataDir: dir)
    try #require(login.code == 0, "\(login.output.stderr)")
    return dir
  }

  /// A file of random bytes (not an image: sent as is).
  func randomFile(in dir: URL, bytes: Int, name: String = "data.bin") throws -> URL {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: bytes)
    data.withUnsafeMutableBytes { buffer in
      for index in stride(from: 0, to: buffer.count, by: 8) {
        var word = generator.next()
        withUnsafeBytes(of: &word) { wordBytes in
          for offset in 0..<min(8, buffer.count - index) {
            buffer[index + offset] = wordBytes[offset]
          }
        }
      }
    }
    let url = dir.appendingPathComponent(name)
    try data.write(to: url)
    return url
  }

  func sha256(_ url: URL) throws -> String {
    SHA256.hex(SHA256.hash(try Data(contentsOf: url)))
  }

  func token(_ backend: ReferenceBackend) async throws -> String {
    let (_, body) = try await backend.call(
      "POST", "/auth/token", json: #"{"username":"alice","password":"secret"}"#)
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try #require(object["access_token"] as? String)
  }

  func photos(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    let bearer = try await token(backend)
    let (status, body) = try await backend.call(
      "GET", "/photos", headers: ["Authorization": "Bearer \(bearer)"])
    try #require(status == 200)
    return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
  }

  func uploads(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    let (_, body) = try await backend.call("GET", "/__uploads")
    return (try JSONSerialization.jsonObject(with: body) as? [[String: Any]]) ?? []
  }

  func receivedBytes(_ backend: ReferenceBackend) async throws -> Int {
    try await uploads(backend).reduce(0) { $0 + (($1["bytes_received"] as? Int) ?? 0) }
  }

  func resumeRecords(_ dir: URL) -> [String] {
    let folder = dir.appendingPathComponent("uploads")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
      .filter { $0.hasSuffix(".json") }
  }

  /// The one stored photo, checked against the original's SHA-256 and size.
  func expectOnePhoto(_ backend: ReferenceBackend, of file: URL, title: String? = nil)
    async throws
  {
    let stored = try await photos(backend)
    #expect(stored.count == 1)
    let photo = try #require(stored.first)
    #expect(photo["sha256"] as? String == (try sha256(file)))
    let size = try #require(
      (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?
        .intValue)
    #expect(photo["size"] as? Int == size)
    if let title { #expect(photo["title"] as? String == title) }
  }

  @Test("a whole upload: the stored photo has the file's SHA-256; the resume state is gone")
  func wholeUpload() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try randomFile(in: dir, bytes: 9 * 1024 * 1024 + 123)
    let result = await run(
      backend, ["upload", "--resumable", file.path, "--title", "Train", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let last = try #require(result.lines.last)
    #expect(last["status"] as? String == "ok")
    #expect(last["resumed_at"] as? Int == 0)
    #expect((last["upload_url"] as? String)?.contains("/uploads/") == true)
    let id = try #require(last["id"] as? String)
    try await expectOnePhoto(backend, of: file, title: "Train")
    #expect(try await photos(backend).first?["id"] as? String == id)
    // Every byte crossed once: no retry, no resend.
    #expect(try await receivedBytes(backend) == 9 * 1024 * 1024 + 123)
    #expect(!result.lines.contains { $0["event"] as? String == "resumed" })
    let sent = result.lines.compactMap { $0["event"] as? String == "progress" ? $0["sent"] : nil }
    #expect((sent.first as? Int) == 0)
    #expect(resumeRecords(dir).isEmpty)
    let requests = try await backend.log().filter {
      ($0["path"] as? String)?.hasPrefix("/uploads") == true
    }
    #expect(requests.compactMap { $0["method"] as? String }.contains("PATCH"))
  }

  @Test("a PATCH whose answer is lost (stored, then 503): the retry asks HEAD and sends the rest")
  func lostAnswerResumes() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 10 * 1024 * 1024
    let file = try randomFile(in: dir, bytes: size)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":503,"path":"/uploads/","method":"PATCH","after":true}"#)
    let result = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let events = result.lines.compactMap { $0["event"] as? String }
    #expect(events.contains("retrying"))
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    #expect((resumed["resumed_at"] as? Int ?? 0) >= 2 * Self.chunk)
    // Progress after the resume starts at the confirmed offset, not at 0.
    let index = try #require(result.lines.firstIndex { $0["event"] as? String == "resumed" })
    let next = result.lines[(index + 1)...].first { $0["event"] as? String == "progress" }
    #expect((next?["sent"] as? Int ?? 0) >= 2 * Self.chunk)
    // The result says where the attempt that completed it resumed, not where the run began.
    #expect(result.lines.last?["resumed_at"] as? Int == resumed["resumed_at"] as? Int)
    try await expectOnePhoto(backend, of: file)
    #expect(try await receivedBytes(backend) == size)
    let methods = try await backend.log().compactMap { entry -> String? in
      guard (entry["path"] as? String)?.hasPrefix("/uploads/") == true else { return nil }
      return entry["method"] as? String
    }
    #expect(methods.contains("HEAD"))
  }

  @Test("kill -9 mid-upload, then the same command: a HEAD, only the rest, the same photo")
  func killedProcessResumes() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 40 * 1024 * 1024
    let file = try randomFile(in: dir, bytes: size)
    // Each request waits on the server before it is handled, so the kill that follows two
    // confirmed chunks lands before the next one can complete (a loopback upload with the
    // SHA extensions is over in a blink otherwise).
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":300}"#)
    let process = Process()
    process.executableURL = try InProcessCLI.builtCourier()
    process.arguments = [
      "--base-url", backend.url.absoluteString, "--data-dir", dir.path, "upload", "--resumable",
      file.path, "--json",
    ]
    process.environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
      "PATH": "/usr/bin:/bin",
    ]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    // Killed once the server has confirmed two chunks, and well before the end.
    let deadline = ContinuousClock.now + .seconds(120)
    var offset = 0
    while process.isRunning {
      offset = try await uploads(backend).first?["offset"] as? Int ?? 0
      if offset >= 2 * Self.chunk { break }
      try #require(ContinuousClock.now < deadline, "the upload never got past two chunks")
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(process.processIdentifier, SIGKILL)
    #expect(await process.exited())
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":0}"#)
    try #require(offset < size, "the upload ended before it could be killed")
    #expect(resumeRecords(dir).count == 1)
    #expect(try await photos(backend).isEmpty)
    // The killed run's last request may still be in the server's hands: wait until every
    // logged request has its status, then count what the first run cost.
    let settled = ContinuousClock.now + .seconds(120)
    let pending: ([String: Any]) -> Bool = { $0["status"] == nil || $0["status"] is NSNull }
    while try await backend.log().contains(where: pending) {
      try #require(ContinuousClock.now < settled, "the killed request never ended on the server")
      try await Task.sleep(for: .milliseconds(20))
    }
    let before = try await receivedBytes(backend)
    let result = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    #expect((resumed["resumed_at"] as? Int ?? 0) >= offset)
    #expect(result.lines.last?["resumed_at"] as? Int == resumed["resumed_at"] as? Int)
    try await expectOnePhoto(backend, of: file)
    // The second run sent only the rest; the kill cost at most the chunk in flight (its bytes
    // may have reached the server before the kill; checksummed, a cut chunk is discarded).
    let received = try await receivedBytes(backend)
    let resumedAt = resumed["resumed_at"] as? Int ?? 0
    #expect(received - before == size - resumedAt, "the second run: \(received - before) bytes")
    #expect(received <= size + (size - offset), "\(received) bytes for \(size)")
    let all = try await uploads(backend)
    #expect(all.count == 1, "one upload for the whole life, one Idempotency-Key")
    #expect(resumeRecords(dir).isEmpty)
    print("tus kill -9 resume: \(received) bytes received for a \(size)-byte file")
  }

  @Test(
    "an impossible offset in a PATCH answer stops with a clear error; the next run resumes",
    arguments: [
      ("beyond", 1), ("behind", 5 * 1024 * 1024), ("missing", 1),
    ])
  func hostileOffsets(_ mode: String, _ delta: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos",
      json:
        #"{"tus_offset_mode":"\#(mode)","tus_offset_method":"PATCH","tus_offset_delta":\#(delta)}"#)
    let first = await run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    #expect(first.output.stderr.contains("no damaged file is stored"), "\(first.output.stderr)")
    #expect(try await photos(backend).isEmpty)
    #expect(resumeRecords(dir).count == 1)
    let second = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(second.lines.contains { $0["event"] as? String == "resumed" })
    try await expectOnePhoto(backend, of: file)
    #expect(try await uploads(backend).count == 1)
  }

  @Test("an expired upload (410) starts over once, cleanly, with a new upload")
  func expiredRestarts() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos", json: #"{"tus_offset_mode":"missing","tus_offset_method":"PATCH"}"#)
    let first = await run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    let (status, _) = try await backend.call("POST", "/__uploads/expire")
    #expect(status == 200)
    let second = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(second.lines.last?["resumed_at"] as? Int == 0)
    try await expectOnePhoto(backend, of: file)
    let states = try await uploads(backend).compactMap { $0["state"] as? String }
    #expect(states.sorted() == ["completed", "expired"])
    let keys = Set(try await uploads(backend).compactMap { $0["idempotency_key"] as? String })
    #expect(keys.count == 2, "a new key after a 410")
  }

  @Test("a checksum mismatch (460) resends the chunk; the stored file is the original")
  func checksumMismatch() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 10 * 1024 * 1024
    let file = try randomFile(in: dir, bytes: size)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":460,"path":"/uploads/","method":"PATCH"}"#)
    let result = await run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    try await expectOnePhoto(backend, of: file)
    let received = try await receivedBytes(backend)
    #expect(received > size && received <= size + Self.chunk)
  }

  @Test("412 (a tus version the server does not speak) is a clear error, not retried")
  func versionRefused() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try randomFile(in: dir, bytes: 1024)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":412,"path":"/uploads","method":"POST"}"#)
    let result = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 65, "\(result.output.stderr)")
    let failure = try #require(result.lines.last)
    #expect(failure["code"] as? String == "tus_version_unsupported")
    #expect(try await photos(backend).isEmpty)
  }

  @Test("a changed file starts over: the old upload is terminated, the new bytes are stored")
  func changedFileStartsOver() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos", json: #"{"tus_offset_mode":"missing","tus_offset_method":"PATCH"}"#)
    let first = await run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    _ = try randomFile(in: dir, bytes: 6 * 1024 * 1024)
    let second = await run(backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(!second.lines.contains { $0["event"] as? String == "resumed" })
    try await expectOnePhoto(backend, of: file)
    let states = try await uploads(backend).compactMap { $0["state"] as? String }
    #expect(states.sorted() == ["completed", "terminated"])
  }
}
