import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// `courier upload` against the reference backend's IETF resumable uploads server (decision
/// 2702): real processes and sockets, a proxy that cuts or stalls the connection at a byte
/// count, `kill -9` for a resume in a new process.
@Suite("courier upload against the IETF draft server", .serialized, .sharedIETFBackend)
struct IETFUploadIntegrationTests {
  let cli = CLIFixture("courier-ietf-it", environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])

  func resumeRecords(_ dir: URL) -> [String] {
    let folder = dir.appendingPathComponent("uploads")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
      .filter { $0.hasSuffix(".json") }
  }

  /// The photo stored from `file`: exactly one, with its SHA-256.
  func expectStored(_ server: IETFBackend, _ file: URL, title: String? = nil) async throws {
    try await CLIFixture.expectOnePhoto(server.backend, of: file, title: title)
  }

  @Test("a plain upload to a draft server: 104 heard, created and completed in one POST")
  func creationAndCompletion() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 3 * 1024 * 1024 + 17, name: "photo.jpg")
    let result = await cli.run(
      server.url.absoluteString,
      ["upload", file.path, "--no-compress", "--title", "Dune", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let last = try #require(result.lines.last)
    #expect(last["status"] as? String == "ok")
    #expect((last["upload_url"] as? String)?.contains("/resumable/") == true, "\(last)")
    #expect(last["resumed_at"] as? Int == 0)
    try await expectStored(server, file, title: "Dune")
    let uploads = try await server.uploads()
    #expect(uploads.count == 1)
    #expect(uploads.first?["state"] as? String == "completed")
    #expect(uploads.first?["interop"] as? Int == 8)
    // One request carried everything, once.
    #expect(uploads.first?["bytes_received"] as? Int == last["size"] as? Int)
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test("a plain upload cut at 60%: resumed in the same run, only the missing 40% sent again")
  func cutAndResumedInTheSameRun() async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 8 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size * 6 / 10)
    defer { proxy.stop() }
    let dir = try await cli.client(proxy.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: size, name: "photo.jpg", seed: 27)
    let before = proxy.forwarded
    let result = await cli.run(
      proxy.url.absoluteString, ["upload", file.path, "--no-compress", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let events = result.lines.compactMap { $0["event"] as? String }
    #expect(events.contains("retrying"), "\(events)")
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    let at = try #require(resumed["resumed_at"] as? Int)
    #expect(at >= size * 59 / 100 && at <= size * 6 / 10, "\(resumed)")
    let last = try #require(result.lines.last)
    let body = try #require(last["size"] as? Int)
    try await expectStored(server, file)
    // The server read each byte of the form once: the 60% before the cut, the rest after it.
    #expect(try await server.bytesReceived() == body)
    // And the wire carried little more than the body: heads of a HEAD and a PATCH.
    let wire = proxy.forwarded - before
    #expect(wire >= body && wire <= body + 16 * 1024, "\(wire) for \(body)")
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test("killed with -9 after the 104: the next run asks HEAD and sends only the rest")
  func killedAfterTheResumptionOffer() async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 6 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size / 2, stall: true)
    defer { proxy.stop() }
    let base = proxy.url.absoluteString
    let dir = try await cli.client(base)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: size, name: "photo.jpg", seed: 9)
    let process = try cli.process(base, ["upload", file.path, "--no-compress"], dataDir: dir)
    try process.run()
    // Stalled at half: the server stored what came (its confirmed offset moves in 1 MiB
    // steps) and the client has saved the upload's address from the 104.
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      let offset = try await server.uploads().first?["offset"] as? Int ?? 0
      if offset >= 2 * 1024 * 1024 && !resumeRecords(dir).isEmpty { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(!resumeRecords(dir).isEmpty)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    // The proxy shuts the server's side once the client is gone: wait until it stored it.
    while ContinuousClock.now < deadline {
      if try await server.uploads().first?["writing"] as? Bool == false { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    let held = try #require(try await server.uploads().first?["offset"] as? Int)
    #expect(held >= 2 * 1024 * 1024 && held < size, "\(held)")
    let result = await cli.run(
      base, ["upload", file.path, "--no-compress", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    #expect(resumed["resumed_at"] as? Int == held)
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1, "one upload resumed, not a second one created")
    let last = try #require(result.lines.last)
    #expect(try await server.bytesReceived() <= (last["size"] as? Int ?? 0) + 1024 * 1024)
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test("a queued upload killed with -9 after the 104: courier sync resumes it from the offset")
  func queuedKilledThenSynced() async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 6 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size / 2, stall: true)
    defer { proxy.stop() }
    let base = proxy.url.absoluteString
    let dir = try await cli.client(base)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: size, name: "photo.jpg", seed: 11)
    try await queueThenKillAfterTheOffer(file, base: base, dir: dir, server: server)
    let held = try #require(try await server.uploads().first?["offset"] as? Int)
    #expect(held >= 2 * 1024 * 1024 && held < size, "\(held)")
    let before = try await server.bytesReceived()
    let sync = await cli.run(base, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1, "one upload resumed, not a second one created")
    #expect(uploads.first?["state"] as? String == "completed")
    // The sync sent only what the server did not hold: the form's length less the offset.
    let length = try #require(uploads.first?["length"] as? Int)
    #expect(try await server.bytesReceived() - before == length - held)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("an append limit: the 413 to the whole body is answered with pieces within the limit")
  func appendLimitMeansSmallerPieces() async throws {
    let server = try await SharedIETFBackend.fresh()
    let (status, _) = try await server.call(
      "POST", "/__ietf/config", json: #"{"max_append_size": 1048576}"#)
    try #require(status == 200)
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(
      in: dir, bytes: 3 * 1024 * 1024 + 5, name: "photo.jpg", seed: 3)
    let result = await cli.run(
      server.url.absoluteString, ["upload", file.path, "--no-compress", "--json"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1)
    #expect(uploads.first?["state"] as? String == "completed")
    // Pieces within the limit carried the form once (the refused whole body created nothing).
    let last = try #require(result.lines.last)
    #expect(uploads.first?["bytes_received"] as? Int == last["size"] as? Int)
    #expect((last["size"] as? Int ?? 0) > 3 * 1024 * 1024)
  }

  @Test("--resumable says what the server offers: the draft on its port, tus on the main one")
  func protocolChoice() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 256 * 1024, name: "photo.jpg", seed: 4)
    let draft = await cli.run(
      server.url.absoluteString, ["upload", "--resumable", file.path, "--no-compress"],
      dataDir: dir)
    #expect(draft.code == 0, "\(draft.output.stderr)")
    #expect(draft.output.stderr.contains("resumable (IETF draft, interop 8)"))
    #expect(try await server.uploads().count == 1)

    let main = server.backend.url.absoluteString
    let other = try await cli.client(main)
    defer { try? FileManager.default.removeItem(at: other) }
    let tus = await cli.run(
      main, ["upload", "--resumable", file.path, "--no-compress"], dataDir: other)
    #expect(tus.code == 0, "\(tus.output.stderr)")
    #expect(tus.output.stderr.contains("resumable (tus 1.0.0)"))
    #expect(try await CLIFixture.uploads(server.backend).count == 1)
  }

  /// Queues `file` and kills `courier sync` with -9 once the server holds 2 MiB of it and the
  /// 104's address is in the resume record, then waits for the server to stop writing.
  /// - Returns: the outbox entry's number.
  @discardableResult
  func queueThenKillAfterTheOffer(
    _ file: URL, base: String, dir: URL, server: IETFBackend, environment: [String: String] = [:]
  ) async throws -> Int {
    let queued = await cli.run(
      base, ["upload", "--queue", file.path, "--no-compress", "--json"], dataDir: dir)
    #expect(queued.code == 0, "\(queued.output.stderr)")
    let sequence = try #require(queued.lines.last?["sequence"] as? Int)
    let process = try cli.process(base, ["sync"], dataDir: dir, environment: environment)
    try process.run()
    let deadline = ContinuousClock.now + .seconds(60)
    var recorded = false
    while ContinuousClock.now < deadline {
      let offset = try await server.uploads().first?["offset"] as? Int ?? 0
      recorded = CLIFixture.queuedUploads(in: dir).contains { $0.hasSuffix(".json") }
      if offset >= 2 * 1024 * 1024 && recorded { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(recorded, "the 104's address is in the resume record")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    while ContinuousClock.now < deadline {
      if try await server.uploads().first?["writing"] as? Bool == false { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    return sequence
  }

  @Test("outbox discard of a queued upload the draft started cancels it on the server (DELETE)")
  func discardCancelsTheServersUpload() async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 6 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size / 2, stall: true)
    defer { proxy.stop() }
    let base = proxy.url.absoluteString
    let dir = try await cli.client(base)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: size, name: "photo.jpg", seed: 12)
    let entry = try await queueThenKillAfterTheOffer(file, base: base, dir: dir, server: server)
    #expect(try await server.uploads().first?["state"] as? String == "active")
    let discard = await cli.run(
      base, ["outbox", "discard", String(entry), "--json"], dataDir: dir)
    #expect(discard.code == 0, "\(discard.output.stderr)")
    #expect(discard.lines.last?["server_upload_cancelled"] as? Bool == true)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1)
    #expect(uploads.first?["state"] as? String == "cancelled")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("--resumable with a file that is not an image: tus, which takes any file, not the form")
  func resumableNonImageTakesTus() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 300 * 1024, name: "notes.bin", seed: 5)
    let result = await cli.run(
      server.url.absoluteString, ["upload", "--resumable", file.path, "--no-compress"],
      dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stderr.contains("resumable (tus 1.0.0)"))
    #expect(try await server.uploads().isEmpty, "no draft upload was made")
    let tus = try await CLIFixture.uploads(server.backend)
    #expect(tus.count == 1)
    #expect(tus.first?["state"] as? String == "completed")
  }
}
