import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// The IETF client at interop versions 3 to 8 against the reference backend (decisions 2707,
/// 2708): each version cut and resumed, a server that takes only older versions, one that
/// takes none of Courier's, and a queued upload killed at interop 3 that resumes at 3.
extension IETFUploadIntegrationTests {
  /// Makes the server take only `versions` (`POST /__ietf/config`).
  func accept(_ server: IETFBackend, _ versions: [Int]) async throws {
    let (status, _) = try await server.call(
      "POST", "/__ietf/config", json: #"{"interop_versions": \#(versions)}"#)
    try #require(status == 200)
  }

  @Test(
    "a plain upload at each interop version, cut at 60%: resumed in the same run, stored whole",
    arguments: 3...8)
  func eachVersionCutAndResumed(_ version: Int) async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 3 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size * 6 / 10)
    defer { proxy.stop() }
    let dir = try await cli.client(proxy.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(
      in: dir, bytes: size, name: "photo.jpg", seed: UInt64(30 + version))
    let result = await cli.run(
      proxy.url.absoluteString,
      ["upload", file.path, "--no-compress", "--interop", String(version), "--json"],
      dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let resumed = try #require(result.lines.first { $0["event"] as? String == "resumed" })
    let at = try #require(resumed["resumed_at"] as? Int)
    #expect(at > 0 && at <= size * 6 / 10, "\(resumed)")
    let last = try #require(result.lines.last)
    #expect(last["interop"] as? Int == version)
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1)
    #expect(uploads.first?["interop"] as? Int == version)
    // Every request of the upload (creation, HEAD, appends) named the same version.
    #expect(uploads.first?["versions"] as? [Int] == [version], "\(uploads)")
    // Each byte of the form read once: the part before the cut, then the rest.
    #expect(try await server.bytesReceived() == last["size"] as? Int)
    #expect(resumeRecords(dir).isEmpty)
  }

  @Test("a server that takes only 3 to 5: interop 8 refused, the upload made at 5, and said")
  func negotiatesDown() async throws {
    let server = try await SharedIETFBackend.fresh()
    try await accept(server, [3, 4, 5])
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 700 * 1024, name: "photo.jpg", seed: 41)
    let json = await cli.run(
      server.url.absoluteString, ["upload", file.path, "--no-compress", "--json"], dataDir: dir)
    #expect(json.code == 0, "\(json.output.stderr)")
    let said = try #require(json.lines.first { $0["event"] as? String == "protocol" })
    #expect(said["interop"] as? Int == 5, "\(said)")
    #expect(json.lines.last?["interop"] as? Int == 5)
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1, "the refused creation made nothing")
    #expect(uploads.first?["interop"] as? Int == 5)

    // In words on standard error, with --resumable's choice first (a reset server: the
    // session of a new client).
    _ = try await SharedIETFBackend.fresh()
    try await accept(server, [3, 4, 5])
    let other = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: other) }
    let text = await cli.run(
      server.url.absoluteString, ["upload", "--resumable", file.path, "--no-compress"],
      dataDir: other)
    #expect(text.code == 0, "\(text.output.stderr)")
    #expect(text.output.stderr.contains("resumable (IETF draft, interop 8)"))
    #expect(
      text.output.stderr.contains(
        "the server refused interop 8 of the IETF draft; the upload spoke interop 5"),
      "\(text.output.stderr)")
  }

  @Test("a server that takes none of Courier's versions: a clear refusal, the queued entry kept")
  func noVersionInCommon() async throws {
    let server = try await SharedIETFBackend.fresh()
    try await accept(server, [9, 10])
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 200 * 1024, name: "photo.jpg", seed: 42)
    let direct = await cli.run(
      server.url.absoluteString, ["upload", file.path, "--no-compress"], dataDir: dir)
    #expect(direct.code != 0)
    #expect(
      direct.output.stderr.contains("it takes interop versions 9, 10, and Courier speaks 3 to 8"),
      "\(direct.output.stderr)")
    #expect(try await CLIFixture.photos(server.backend).isEmpty)

    let queued = await cli.run(
      server.url.absoluteString, ["upload", "--queue", file.path, "--no-compress"], dataDir: dir)
    #expect(queued.code == 0, "\(queued.output.stderr)")
    _ = await cli.run(server.url.absoluteString, ["sync"], dataDir: dir)
    // Nothing lost: the entry and its bytes are still there, its message names the versions.
    let listing = try await cli.outbox(server.url.absoluteString, dataDir: dir)
    #expect(listing["rejected"] as? Int == 1, "\(listing)")
    let text = String(describing: listing)
    #expect(text.contains("9, 10"), "\(text)")
    #expect(CLIFixture.queuedUploads(in: dir).contains { !$0.hasSuffix(".json") })
    #expect(try await server.uploads().isEmpty)
  }

  @Test("courier upload --queue --interop 4: the entry keeps the version, courier sync speaks it")
  func queuedWithInterop() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 400 * 1024, name: "photo.jpg", seed: 46)
    let queued = await cli.run(
      server.url.absoluteString,
      ["upload", "--queue", "--interop", "4", file.path, "--no-compress"], dataDir: dir)
    #expect(queued.code == 0, "\(queued.output.stderr)")
    let sync = await cli.run(server.url.absoluteString, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1)
    #expect(uploads.first?["interop"] as? Int == 4)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("--interop and ietf_interop_version outside 3 to 8 are refused with a sentence")
  func versionOptionValidated() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 1024, name: "photo.jpg", seed: 43)
    let option = await cli.run(
      server.url.absoluteString, ["upload", file.path, "--interop", "9"], dataDir: dir)
    #expect(option.code != 0)
    #expect(option.output.stderr.contains("Courier speaks, 3 to 8"), "\(option.output.stderr)")
    let config = await cli.run(
      server.url.absoluteString, ["upload", file.path], dataDir: dir,
      environment: ["COURIER_IETF_INTEROP_VERSION": "2"])
    #expect(config.code != 0)
    #expect(config.output.stderr.contains("COURIER_IETF_INTEROP_VERSION"))
    #expect(config.output.stderr.contains("3 to 8"), "\(config.output.stderr)")
    #expect(try await server.uploads().isEmpty)
  }

  @Test("a queued upload sent at interop 3 and killed with -9: courier sync resumes at 3")
  func queuedAtThreeResumesAtThree() async throws {
    let server = try await SharedIETFBackend.fresh()
    let size = 6 * 1024 * 1024
    let proxy = try CuttingProxy(upstream: server.url.port ?? 0, cutAfter: size / 2, stall: true)
    defer { proxy.stop() }
    let base = proxy.url.absoluteString
    let dir = try await cli.client(base)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: size, name: "photo.jpg", seed: 44)
    // The first sync is configured to speak 3; the second is not (it would speak 8): the
    // version comes from the upload's record.
    try await queueThenKillAfterTheOffer(
      file, base: base, dir: dir, server: server,
      environment: ["COURIER_IETF_INTEROP_VERSION": "3"])
    let held = try #require(try await server.uploads().first?["offset"] as? Int)
    #expect(held >= 2 * 1024 * 1024 && held < size, "\(held)")
    #expect(try await server.uploads().first?["interop"] as? Int == 3)
    let before = try await server.bytesReceived()
    let sync = await cli.run(base, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    try await expectStored(server, file)
    let uploads = try await server.uploads()
    #expect(uploads.count == 1, "one upload resumed, not a second one created")
    #expect(uploads.first?["interop"] as? Int == 3)
    #expect(uploads.first?["versions"] as? [Int] == [3], "\(uploads)")
    let length = try #require(uploads.first?["length"] as? Int)
    #expect(try await server.bytesReceived() - before == length - held)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }
}

extension IETFUploadIntegrationTests {
  @Test("a queued auto upload of a file that is not an image goes by tus, not the draft's form")
  func queuedNonImageTakesTus() async throws {
    let server = try await SharedIETFBackend.fresh()
    let dir = try await cli.client(server.url.absoluteString)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = try CLIFixture.randomFile(in: dir, bytes: 300 * 1024, name: "notes.bin", seed: 45)
    let queued = await cli.run(
      server.url.absoluteString, ["upload", "--queue", file.path, "--no-compress"], dataDir: dir)
    #expect(queued.code == 0, "\(queued.output.stderr)")
    let sync = await cli.run(server.url.absoluteString, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let listing = try await cli.outbox(server.url.absoluteString, dataDir: dir)
    #expect(listing["rejected"] as? Int == 0, "\(listing)")
    #expect(try await server.uploads().isEmpty, "no draft upload was made")
    let tus = try await CLIFixture.uploads(server.backend)
    #expect(tus.count == 1)
    #expect(tus.first?["state"] as? String == "completed")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }
}
