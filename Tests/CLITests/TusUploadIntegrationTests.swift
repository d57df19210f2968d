import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// `courier upload --resumable` (tus 1.0.0) against the reference backend's `/uploads`: real
/// processes and sockets, the backend's chaos hooks for hostile answers, `kill -9` for a
/// resume in a new process (decision 1301).
@Suite("courier upload --resumable against the reference backend", .serialized, .sharedBackend)
struct TusUploadIntegrationTests {
  /// A run's first piece without a confirmed rate (decisions 2704, 2710).
  static let firstPiece = Int(UploadPieces.defaultFirst)
  /// The most the first `PATCH` after it carries (pieces grow at most fourfold a step).
  static let chunk = 4 * firstPiece

  let cli = CLIFixture("courier-tus-it", environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])

  func receivedBytes(_ backend: ReferenceBackend) async throws -> Int {
    try await CLIFixture.uploads(backend).reduce(0) { $0 + (($1["bytes_received"] as? Int) ?? 0) }
  }

  func resumeRecords(_ dir: URL) -> [String] {
    let folder = dir.appendingPathComponent("uploads")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
      .filter { $0.hasSuffix(".json") }
  }

  /// The JSON lines of a process's standard output.
  func jsonLines(_ result: ChildProcess.Result) -> [[String: Any]] {
    result.stdout.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  /// A hostile answer's error as a person reads it: exit 76, the sentence for what the server
  /// did, no raw code, no markup.
  func expectReadableStop(_ result: ChildProcess.Result, _ mode: String) {
    let said = [
      "beyond": "claims more bytes than the file has", "behind": "lost bytes it had confirmed",
      "missing": "did not say how much it has",
    ]
    #expect(result.status == 76 && !result.signaled, "\(result)")
    #expect(result.stderr.contains(said[mode] ?? "?"), "\(result)")
    #expect(result.stderr.contains("no damaged file is stored"), "\(result)")
    #expect(!result.stderr.contains("tus_offset"), "\(result)")
    #expect(!result.stderr.contains("<"), "\(result)")
  }

  /// Both armed hooks were spent: the lost answer happened and the lie reached a `HEAD`.
  func expectHooksSpent(_ backend: ReferenceBackend) async throws {
    let (_, body) = try await backend.call("GET", "/__chaos")
    let chaos = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    #expect(chaos["fail_next"] as? Int == 0, "\(chaos)")
    #expect(chaos["tus_offset_count"] as? Int == 0, "\(chaos)")
  }

  /// No damaged file on the server: no photo yet, or exactly one with the original's SHA-256.
  func expectNoDamagedPhoto(_ backend: ReferenceBackend, of file: URL) async throws {
    let stored = try await CLIFixture.photos(backend)
    #expect(stored.count <= 1)
    for photo in stored { #expect(photo["sha256"] as? String == (try CLIFixture.sha256(file))) }
  }

  /// Arms the lost answer of the next PATCH (stored, then 503) and a lie in the next `HEAD`
  /// answer (the one the retry asks where the upload stands).
  func armLostPatchThenLyingHead(_ backend: ReferenceBackend, _ mode: String, _ delta: Int)
    async throws
  {
    let (status, _) = try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":503,"path":"/uploads/","method":"PATCH","after":true,"#
        + #""tus_offset_mode":"\#(mode)","tus_offset_method":"HEAD","tus_offset_delta":\#(delta)}"#)
    try #require(status == 200)
  }

  @Test("a whole upload: the stored photo has the file's SHA-256; the resume state is gone")
  func wholeUpload() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 9 * 1024 * 1024 + 123)
    let result = await cli.run(
      backend, ["upload", "--resumable", file.path, "--title", "Train", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let last = try #require(result.lines.last)
    #expect(last["status"] as? String == "ok")
    #expect(last["resumed_at"] as? Int == 0)
    #expect((last["upload_url"] as? String)?.contains("/uploads/") == true)
    let id = try #require(last["id"] as? String)
    try await CLIFixture.expectOnePhoto(backend, of: file, title: "Train")
    #expect(try await CLIFixture.photos(backend).first?["id"] as? String == id)
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
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 10 * 1024 * 1024
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":503,"path":"/uploads/","method":"PATCH","after":true}"#)
    let result = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let events = result.lines.compactMap { $0["event"] as? String }
    #expect(events.contains("retrying"))
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    #expect((resumed["resumed_at"] as? Int ?? 0) >= Self.firstPiece)
    // Progress after the resume starts at the confirmed offset, not at 0.
    let index = try #require(result.lines.firstIndex { $0["event"] as? String == "resumed" })
    let next = result.lines[(index + 1)...].first { $0["event"] as? String == "progress" }
    #expect((next?["sent"] as? Int ?? 0) >= Self.firstPiece)
    // The result says where the attempt that completed it resumed, not where the run began.
    #expect(result.lines.last?["resumed_at"] as? Int == resumed["resumed_at"] as? Int)
    try await CLIFixture.expectOnePhoto(backend, of: file)
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
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 40 * 1024 * 1024
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    // The server lets two PATCHes (two chunks) through and holds the third until released:
    // the kill lands mid-upload however fast the loopback and the SHA extensions are, and
    // however slow the machine (a delay on every request only made that likely).
    try await backend.call("POST", "/__hold", json: #"{"after":2,"method":"PATCH"}"#)
    let process = try cli.process(
      backend.url.absoluteString, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let deadline = ContinuousClock.now + .seconds(120)
    while try await CLIFixture.heldRequests(backend) == 0 {
      try #require(process.isRunning, "the upload ended before its third chunk was held")
      try #require(ContinuousClock.now < deadline, "the upload never got past two chunks")
      try await Task.sleep(for: .milliseconds(10))
    }
    let offset = try await CLIFixture.uploads(backend).first?["offset"] as? Int ?? 0
    kill(process.processIdentifier, SIGKILL)
    #expect(await process.exited())
    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    try #require(offset >= Self.firstPiece, "killed after two confirmed chunks: \(offset)")
    try #require(offset < size, "the upload ended before it could be killed")
    #expect(resumeRecords(dir).count == 1)
    #expect(try await CLIFixture.photos(backend).isEmpty)
    // The killed run's last request may still be in the server's hands: wait until every
    // logged request has its status, then count what the first run cost.
    let settled = ContinuousClock.now + .seconds(120)
    let pending: ([String: Any]) -> Bool = { $0["status"] == nil || $0["status"] is NSNull }
    while try await backend.log().contains(where: pending) {
      try #require(ContinuousClock.now < settled, "the killed request never ended on the server")
      try await Task.sleep(for: .milliseconds(20))
    }
    let before = try await receivedBytes(backend)
    let result = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    #expect((resumed["resumed_at"] as? Int ?? 0) >= offset)
    #expect(result.lines.last?["resumed_at"] as? Int == resumed["resumed_at"] as? Int)
    try await CLIFixture.expectOnePhoto(backend, of: file)
    // The second run sent only the rest; the kill cost at most the chunk in flight (its bytes
    // may have reached the server before the kill; checksummed, a cut chunk is discarded).
    let received = try await receivedBytes(backend)
    let resumedAt = resumed["resumed_at"] as? Int ?? 0
    #expect(received - before == size - resumedAt, "the second run: \(received - before) bytes")
    #expect(received <= size + (size - offset), "\(received) bytes for \(size)")
    let all = try await CLIFixture.uploads(backend)
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
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos",
      json:
        #"{"tus_offset_mode":"\#(mode)","tus_offset_method":"PATCH","tus_offset_delta":\#(delta)}"#)
    let first = await cli.run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    #expect(first.output.stderr.contains("no damaged file is stored"), "\(first.output.stderr)")
    #expect(try await CLIFixture.photos(backend).isEmpty)
    #expect(resumeRecords(dir).count == 1)
    let second = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(second.lines.contains { $0["event"] as? String == "resumed" })
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1)
  }

  @Test("an expired upload (410) starts over once, cleanly, with a new upload")
  func expiredRestarts() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos", json: #"{"tus_offset_mode":"missing","tus_offset_method":"PATCH"}"#)
    let first = await cli.run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    let (status, _) = try await backend.call("POST", "/__uploads/expire")
    #expect(status == 200)
    let second = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(second.lines.last?["resumed_at"] as? Int == 0)
    try await CLIFixture.expectOnePhoto(backend, of: file)
    let states = try await CLIFixture.uploads(backend).compactMap { $0["state"] as? String }
    #expect(states.sorted() == ["completed", "expired"])
    let keys = Set(
      try await CLIFixture.uploads(backend).compactMap { $0["idempotency_key"] as? String })
    #expect(keys.count == 2, "a new key after a 410")
  }

  @Test("a checksum mismatch (460) resends the chunk; the stored file is the original")
  func checksumMismatch() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 10 * 1024 * 1024
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":460,"path":"/uploads/","method":"PATCH"}"#)
    let result = await cli.run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    let received = try await receivedBytes(backend)
    #expect(received > size && received <= size + Self.chunk)
  }

  @Test("412 (a tus version the server does not speak) is a clear error, not retried")
  func versionRefused() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 1024)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":412,"path":"/uploads","method":"POST"}"#)
    let result = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(result.code == 65, "\(result.output.stderr)")
    let failure = try #require(result.lines.last)
    #expect(failure["code"] as? String == "tus_version_unsupported")
    #expect(try await CLIFixture.photos(backend).isEmpty)
  }

  @Test("a changed file starts over: the old upload is terminated, the new bytes are stored")
  func changedFileStartsOver() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await backend.call(
      "POST", "/__chaos", json: #"{"tus_offset_mode":"missing","tus_offset_method":"PATCH"}"#)
    let first = await cli.run(backend, ["upload", "--resumable", file.path], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    // Other bytes (another seed) under the same name.
    _ = try CLIFixture.randomFile(in: dir, bytes: 6 * 1024 * 1024, seed: 2)
    let second = await cli.run(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(!second.lines.contains { $0["event"] as? String == "resumed" })
    try await CLIFixture.expectOnePhoto(backend, of: file)
    let states = try await CLIFixture.uploads(backend).compactMap { $0["state"] as? String }
    #expect(states.sorted() == ["completed", "terminated"])
  }

  @Test(
    "a lying HEAD after a lost PATCH answer stops a real process clearly; the next run completes",
    arguments: [("beyond", 1 << 40), ("behind", 1 << 40), ("missing", 1)])
  func hostileHeadOffsets(_ mode: String, _ delta: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    try await armLostPatchThenLyingHead(backend, mode, delta)
    let first = try await cli.runProcess(
      backend, ["upload", "--resumable", file.path], dataDir: dir)
    expectReadableStop(first, mode)
    try await expectHooksSpent(backend)
    try await expectNoDamagedPhoto(backend, of: file)
    #expect(resumeRecords(dir).count == 1)
    let second = try await cli.runProcess(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    #expect(second.succeeded, "\(second)")
    #expect(jsonLines(second).last?["status"] as? String == "ok", "\(second)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1, "resumed, not created again")
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test(
    "courier sync meets a lying HEAD: a clear stop, the entry stays, the next sync stores it once",
    arguments: [("beyond", 1 << 40), ("behind", 1 << 40), ("missing", 1)])
  func hostileHeadOffsetsQueued(_ mode: String, _ delta: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    let queued = try await cli.runProcess(
      backend, ["upload", "--queue", file.path, "--resumable", "--json"], dataDir: dir)
    try #require(queued.succeeded, "\(queued)")
    let id = try #require(jsonLines(queued).last?["id"] as? String, "\(queued)")
    try await armLostPatchThenLyingHead(backend, mode, delta)
    let first = try await cli.runProcess(backend, ["sync"], dataDir: dir)
    expectReadableStop(first, mode)
    try await expectHooksSpent(backend)
    try await expectNoDamagedPhoto(backend, of: file)
    let listing = try await cli.runProcess(backend, ["outbox", "--json"], dataDir: dir)
    try #require(listing.succeeded, "\(listing)")
    let entries = try #require(jsonLines(listing).last?["entries"] as? [[String: Any]])
    #expect(entries.count == 1, "the entry is never lost: \(listing.stdout)")
    #expect(entries.first?["state"] as? String == "pending", "\(listing.stdout)")
    let kept =
      (try? FileManager.default.contentsOfDirectory(
        atPath: dir.appendingPathComponent("queued-uploads").path)) ?? []
    #expect(kept.contains("\(id).body"), "its bytes stay: \(kept)")
    let second = try await cli.runProcess(backend, ["sync", "--json"], dataDir: dir)
    #expect(second.succeeded, "\(second)")
    #expect(jsonLines(second).last?["sent"] as? Int == 1, "\(second)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1, "resumed, not created again")
    let after = try await cli.runProcess(backend, ["outbox", "--json"], dataDir: dir)
    #expect((jsonLines(after).last?["entries"] as? [[String: Any]])?.isEmpty == true, "\(after)")
  }

  @Test(
    "a HEAD one byte past what was stored, on a slow link: the 409 sets it right, nothing sticks",
    arguments: [0, 2100])
  func headSlightlyBeyondRecovers(_ delayMS: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    // With each answer 2.1 s late the resume record is saved at every step (at most every 2 s),
    // so a claimed offset taken as confirmed would be written down and stop every later run.
    let (status, _) = try await backend.call(
      "POST", "/__chaos",
      json: #"{"delay_ms":\#(delayMS),"fail_next":1,"status":503,"#
        + #""path":"/uploads/","method":"PATCH","after":true,"tus_offset_mode":"beyond","#
        + #""tus_offset_method":"HEAD","tus_offset_delta":1}"#)
    try #require(status == 200)
    let result = try await cli.runProcess(
      backend, ["upload", "--resumable", file.path, "--json"], dataDir: dir)
    // A HEAD is bounded by the length only (a process before may have sent more than this one
    // knows): the PATCH from the claimed offset is refused (409), the next HEAD is the truth,
    // and the claim was never taken as confirmed (tus_offset_behind before the fix).
    #expect(result.succeeded, "\(result)")
    #expect(jsonLines(result).last?["status"] as? String == "ok", "\(result)")
    try await expectHooksSpent(backend)
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":0}"#)
    let patches = try await backend.log().filter {
      ($0["path"] as? String)?.hasPrefix("/uploads/") == true && $0["method"] as? String == "PATCH"
    }
    #expect(patches.contains { $0["status"] as? Int == 409 }, "\(patches)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1)
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test(
    "courier sync meets a HEAD one byte past what was stored: the 409 sets it right, sent once",
    arguments: [0, 2100])
  func headSlightlyBeyondRecoversQueued(_ delayMS: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    let queued = try await cli.runProcess(
      backend, ["upload", "--queue", file.path, "--resumable", "--json"], dataDir: dir)
    try #require(queued.succeeded, "\(queued)")
    let (status, _) = try await backend.call(
      "POST", "/__chaos",
      json: #"{"delay_ms":\#(delayMS),"fail_next":1,"status":503,"#
        + #""path":"/uploads/","method":"PATCH","after":true,"tus_offset_mode":"beyond","#
        + #""tus_offset_method":"HEAD","tus_offset_delta":1}"#)
    try #require(status == 200)
    let sync = try await cli.runProcess(backend, ["sync", "--json"], dataDir: dir)
    #expect(sync.succeeded, "\(sync)")
    #expect(jsonLines(sync).last?["sent"] as? Int == 1, "\(sync)")
    try await expectHooksSpent(backend)
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":0}"#)
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1)
    let after = try await cli.runProcess(backend, ["outbox", "--json"], dataDir: dir)
    #expect((jsonLines(after).last?["entries"] as? [[String: Any]])?.isEmpty == true, "\(after)")
  }
}
