import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierLinux
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// `courier upload --queue` then `courier sync` against the reference backend (decision 1302):
/// the entry and its bytes, one Idempotency-Key for the upload's life, the bytes removed only
/// when the server proves it stored them, a refusal quarantined with its bytes until discarded,
/// and hostile answers (impossible offsets, 412, 460) that never lose the entry nor store a
/// damaged file.
@Suite("courier upload --queue against the reference backend", .serialized, .sharedBackend)
struct QueuedUploadIntegrationTests {
  static let chunk = 4 * 1024 * 1024

  let cli = CLIFixture("courier-queue-it", environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])

  /// The outbox's entries; a listing that fails fails the test.
  func outboxEntries(_ backend: ReferenceBackend, _ dir: URL) async throws -> [[String: Any]] {
    let listing = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    return try #require(listing["entries"] as? [[String: Any]])
  }

  /// Queues `file` and returns the queued line.
  func queue(_ backend: ReferenceBackend, _ file: URL, _ dir: URL, _ extra: [String] = [])
    async throws -> [String: Any]
  {
    let queued = await cli.run(
      backend, ["upload", "--queue", file.path, "--json"] + extra, dataDir: dir)
    try #require(queued.code == 0, "\(queued.output.stderr)")
    let line = try #require(queued.lines.last)
    try #require(line["status"] as? String == "queued", "\(queued.output.stdout)")
    return line
  }

  @Test(
    "queued, listed with its bytes, then sent by sync with tus: one upload, its key, no bytes left")
  func queueThenSync() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 9 * 1024 * 1024 + 17
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    let line = try await queue(backend, file, dir, ["--title", "Train", "--field", "album=2026"])
    #expect(line["bytes"] as? Int == size)
    #expect(line["transfer"] as? String == "auto")
    let id = try #require(line["id"] as? String)
    let operation = try #require(line["operation_id"] as? String)
    // Nothing was sent by the queue itself.
    #expect(try await backend.log().filter { ($0["path"] as? String) != "/auth/token" }.isEmpty)
    #expect(CLIFixture.queuedUploads(in: dir) == ["\(id).body"])
    let entries = try await outboxEntries(backend, dir)
    #expect(entries.count == 1)
    let upload = try #require(entries.first?["upload"] as? [String: Any])
    #expect(upload["bytes_confirmed"] as? Int == 0)
    #expect(upload["bytes_total"] as? Int == size)
    #expect(entries.first?["collection"] as? String == "uploads")
    let text = await cli.run(backend, ["outbox"], dataDir: dir)
    #expect(text.output.stdout.contains("0 bytes / 9.4 MB confirmed"), "\(text.output.stdout)")

    let sync = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    #expect(sync.lines.last?["sent"] as? Int == 1)
    try await CLIFixture.expectOnePhoto(backend, of: file, title: "Train")
    let all = try await CLIFixture.uploads(backend)
    #expect(all.count == 1)
    #expect(all.first?["idempotency_key"] as? String == operation)
    #expect(all.first?["bytes_received"] as? Int == size)
    #expect(try await outboxEntries(backend, dir).isEmpty)
    #expect(
      await CLIFixture.settledQueuedUploads(in: dir).isEmpty,
      "the bytes go once the server confirmed them")
  }

  @Test("a multipart target: one POST of the kept, compressed image, the stored photo proves it")
  func multipartImage() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("beach.png")
    let convert = Process()
    convert.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
    // A noisy picture, which a JPEG makes smaller (a smooth gradient's PNG is smaller than its
    // JPEG, and would be sent as it is).
    convert.arguments = ["-seed", "7", "-size", "640x480", "plasma:blue-yellow", photo.path]
    try convert.run()
    #expect(await convert.exited())
    try #require(FileManager.default.fileExists(atPath: photo.path), "convert made no image")
    let line = try await queue(backend, photo, dir, ["--to", "/photos", "--title", "Beach"])
    #expect((line["compression"] as? [String: Any])?["send"] as? String == "compressed")
    let id = try #require(line["id"] as? String)
    let keptBytes = try Data(contentsOf: dir.appendingPathComponent("queued-uploads/\(id).body"))
    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let stored = try await CLIFixture.photos(backend)
    #expect(stored.count == 1)
    #expect(stored.first?["sha256"] as? String == SHA256.hex(SHA256.hash(keptBytes)))
    #expect(stored.first?["content_type"] as? String == "image/jpeg")
    let methods = try await backend.log().compactMap { entry -> String? in
      guard (entry["path"] as? String) == "/photos" else { return nil }
      return entry["method"] as? String
    }
    #expect(methods.filter { $0 == "POST" }.count == 1)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("a refused upload (4xx) is quarantined with its bytes; discard removes both")
  func refusedIsQuarantined() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 4096)
    // The photos endpoint takes images only: the server refuses this one for good.
    let line = try await queue(backend, file, dir, ["--to", "/photos"])
    let id = try #require(line["id"] as? String)
    let sync = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(sync.code == 65, "\(sync.output.stderr)")
    let refused = try #require((sync.lines.last?["rejected_entries"] as? [[String: Any]])?.first)
    #expect(refused["code"] as? String == "unsupported_format")
    #expect(CLIFixture.queuedUploads(in: dir) == ["\(id).body"], "kept until the user discards it")
    // Another sync does not send it again.
    let again = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(again.lines.last?["sent"] as? Int == 0)
    let posts = try await backend.log().filter {
      ($0["path"] as? String) == "/photos" && ($0["method"] as? String) == "POST"
    }
    #expect(posts.count == 1)
    let discard = await cli.run(backend, ["outbox", "discard", "1"], dataDir: dir)
    #expect(discard.code == 0, "\(discard.output.stderr)")
    #expect(discard.output.stdout.contains("queued upload"), "\(discard.output.stdout)")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
    #expect(try await outboxEntries(backend, dir).isEmpty)
  }

  @Test(
    "an impossible offset stops the replay; the entry and its bytes stay; the next sync resumes",
    arguments: [("beyond", 1), ("behind", 5 * 1024 * 1024), ("missing", 1)])
  func hostileOffsets(_ mode: String, _ delta: Int) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 10 * 1024 * 1024)
    let line = try await queue(backend, file, dir)
    let id = try #require(line["id"] as? String)
    try await backend.call(
      "POST", "/__chaos",
      json:
        #"{"tus_offset_mode":"\#(mode)","tus_offset_method":"PATCH","tus_offset_delta":\#(delta)}"#)
    let first = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stdout)\(first.output.stderr)")
    #expect(first.output.stderr.contains("no damaged file is stored"), "\(first.output.stderr)")
    #expect(try await CLIFixture.photos(backend).isEmpty)
    let entries = try await outboxEntries(backend, dir)
    #expect(entries.count == 1)
    #expect(entries.first?["state"] as? String == "pending")
    #expect(CLIFixture.queuedUploads(in: dir).contains("\(id).body"))
    let second = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(try await CLIFixture.uploads(backend).count == 1)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("sync shows a resumed upload's progress from the server's offset, as courier upload does")
  func syncShowsProgress() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 9 * 1024 * 1024
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    let line = try await queue(backend, file, dir)
    let id = try #require(line["id"] as? String)
    // The first PATCH (4 MiB) is stored, its answer lies: the sync stops, the bytes stay.
    try await backend.call(
      "POST", "/__chaos", json: #"{"tus_offset_mode":"missing","tus_offset_method":"PATCH"}"#)
    let first = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(first.code == 76, "\(first.output.stderr)")
    let stored = try #require(try await CLIFixture.uploads(backend).first?["offset"] as? Int)
    #expect(stored > 0)
    // Each request waits on the server, so the follower sees the transfer while it runs.
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":1500}"#)
    let second = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    try await backend.call("POST", "/__chaos", json: #"{"delay_ms":0}"#)
    #expect(second.code == 0, "\(second.output.stderr)")
    let events = second.lines.filter { $0["id"] as? String == id && $0["event"] != nil }
    let resumed = events.first { $0["event"] as? String == "resumed" }
    #expect(resumed?["resumed_at"] as? Int == stored, "\(second.output.stdout)")
    #expect(resumed?["total"] as? Int == size)
    let sent = events.compactMap { event -> Int? in
      event["event"] as? String == "progress" ? event["sent"] as? Int : nil
    }
    #expect(!sent.isEmpty, "\(second.output.stdout)")
    #expect(sent.allSatisfy { $0 >= stored }, "never from 0: \(sent)")
    #expect(sent == sent.sorted())
    #expect(sent.last == size, "ends full once delivered: \(sent)")
    // The report is still the last line.
    #expect(second.lines.last?["sent"] as? Int == 1, "\(second.output.stdout)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
  }

  @Test("412: refused and kept with its bytes; retried under a new key once the server speaks it")
  func versionRefused() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 300_000)
    let line = try await queue(backend, file, dir, ["--resumable"])
    let id = try #require(line["id"] as? String)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":412,"path":"/uploads","method":"POST"}"#)
    let first = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(first.code == 65, "\(first.output.stderr)")
    let refused = try #require((first.lines.last?["rejected_entries"] as? [[String: Any]])?.first)
    #expect(refused["code"] as? String == "tus_version_unsupported")
    #expect(CLIFixture.queuedUploads(in: dir).contains("\(id).body"))
    let retry = await cli.run(backend, ["outbox", "retry", "--all", "--json"], dataDir: dir)
    #expect(retry.code == 0, "\(retry.output.stderr)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("460 (the chunk arrived damaged): sent again; the stored file is the original")
  func checksumMismatch() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 9 * 1024 * 1024
    let file = try CLIFixture.randomFile(in: dir, bytes: size)
    _ = try await queue(backend, file, dir)
    try await backend.call(
      "POST", "/__chaos",
      json: #"{"fail_next":1,"status":460,"path":"/uploads/","method":"PATCH"}"#)
    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    try await CLIFixture.expectOnePhoto(backend, of: file)
    let received = try await CLIFixture.uploads(backend).first?["bytes_received"] as? Int ?? 0
    #expect(received > size && received <= size + Self.chunk)
  }

  @Test("queued while a sync --watch runs in the same process: the watch sends it by itself")
  func watchSendsQueued() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 200_000)
    let session = try CourierSession.connecting(to: backend.url) { config in
      config.dataDirectory = dir
    }
    let watch = Task {
      for try await _ in session.watch() {}
    }
    defer { watch.cancel() }
    let entry = try await session.queuedUploads.add(file, title: "While watching")
    #expect(entry.key.collection == "uploads")
    let deadline = ContinuousClock.now + .seconds(120)
    while try await CLIFixture.photos(backend).isEmpty {
      try #require(ContinuousClock.now < deadline, "the watch never sent the queued upload")
      try await Task.sleep(for: .milliseconds(50))
    }
    try await CLIFixture.expectOnePhoto(backend, of: file, title: "While watching")
  }
}
