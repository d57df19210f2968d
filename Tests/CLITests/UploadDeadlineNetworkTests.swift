import CourierDomain
import CourierTestSupport
import Foundation
import Testing

/// An upload's body is bounded by lack of progress, not by total time (decision 1303): over a
/// real rate-limited link (`tc tbf` between two network namespaces) an upload that takes
/// several times `--timeout` completes while bytes move, with either transport, plain or
/// queued; and one whose link goes dead (iptables `DROP` on the server's side, carrier kept)
/// ends as timed out once nothing moved for `--timeout`, instead of hanging.
@Suite("Upload deadlines over a rate-limited link in network namespaces", .serialized)
struct UploadDeadlineNetworkTests {
  typealias Setup = QueuedUploadNetworkTests.Setup
  typealias Courier = QueuedUploadNetworkTests.Courier

  /// 6 MiB at 8 Mbit/s: at least 6.3 s on the wire, three times the timeout.
  static let size = 6 * 1024 * 1024
  static let rate = "8mbit"
  static let timeout = 2

  /// Random bytes behind a JPEG's first bytes: `/photos` takes images only, and
  /// `--no-compress` sends them as they are.
  static func photo(in dir: URL) throws -> URL {
    let random = try QueuedUploadNetworkTests.randomFile(in: dir, bytes: size)
    var data = try Data(contentsOf: random)
    data.replaceSubrange(0..<4, with: [0xFF, 0xD8, 0xFF, 0xE0])
    let url = dir.appendingPathComponent("photo.jpg")
    try data.write(to: url)
    try FileManager.default.removeItem(at: random)
    return url
  }

  @Test(
    "a multipart upload lasting three times --timeout completes while bytes move",
    .enabled(if: QueuedUploadNetworkTests.root), arguments: ["curl", "urlsession"])
  func slowUploadCompletes(transport: String) async throws {
    let setup = try await Setup(tag: "dl", rate: Self.rate)
    defer { setup.remove() }
    try await setup.login()
    let file = try Self.photo(in: setup.dir)
    let start = ContinuousClock.now
    let run = try await setup.courier(
      [
        "--transport", transport, "--timeout", String(Self.timeout), "upload", "--no-compress",
        file.path, "--json",
      ], environment: ["COURIER_MAX_ATTEMPTS": "1"])
    let elapsed = start.duration(to: .now)
    #expect(run.process.terminationStatus == 0, "\(run.printed)")
    // The premise: the body took longer than the old overall deadline would have allowed.
    #expect(elapsed > .seconds(Self.timeout * 2), "the link was not slow enough: \(elapsed)")
    let photos = try await setup.backend.photos()
    #expect(photos.count == 1)
    #expect(photos.first?["size"] as? Int == Self.size)
  }

  @Test(
    "a queued multipart upload lasting three times --timeout is sent by one sync",
    .enabled(if: QueuedUploadNetworkTests.root))
  func slowQueuedUploadCompletes() async throws {
    let setup = try await Setup(tag: "dq", rate: Self.rate)
    defer { setup.remove() }
    try await setup.login()
    let file = try Self.photo(in: setup.dir)
    _ = try await setup.queue(file, ["--no-compress", "--to", "/photos"])
    let sync = try await setup.courier(
      ["--timeout", String(Self.timeout), "sync", "--json"],
      environment: ["COURIER_MAX_ATTEMPTS": "1"])
    #expect(sync.process.terminationStatus == 0, "\(sync.printed)")
    #expect(sync.lines.last?["sent"] as? Int == 1, "\(sync.printed)")
    let photos = try await setup.backend.photos()
    #expect(photos.count == 1)
    #expect(photos.first?["size"] as? Int == Self.size)
  }

  @Test(
    "a link that goes dead mid-body: timed out once nothing moved for --timeout, not a hang",
    .enabled(if: QueuedUploadNetworkTests.root), arguments: ["curl", "urlsession"])
  func deadLinkTimesOut(transport: String) async throws {
    let setup = try await Setup(tag: "dd", rate: Self.rate)
    defer { setup.remove() }
    try await setup.login()
    // The link dies after a megabyte: a quota of bytes, then every packet dropped, so it dies
    // mid-body however slow the machine is.
    try await setup.net.stall(afterBytes: 1024 * 1024, toPort: setup.backend.port)
    let file = try Self.photo(in: setup.dir)
    let upload = try Courier(
      setup.net, setup.backend, dataDir: setup.dir,
      [
        "--transport", transport, "--timeout", String(Self.timeout), "upload", "--no-compress",
        file.path, "--json",
      ], environment: ["COURIER_MAX_ATTEMPTS": "1"])
    // Which the test sees first, the stall or the upload's end, depends on the machine's load
    // (2 s of no progress can pass between two looks at iptables' counter): either order is
    // fine, as long as the link did die mid-body and the upload then ended as timed out.
    let status = await upload.finish(within: .seconds(240))
    try #require(status != nil, "the upload hung on a dead link: \(upload.printed)")
    #expect(try await setup.net.isStalled(), "the link never died: \(upload.printed)")
    #expect(status == 75, "timed out is transient (75): \(upload.printed)")
    let failure = upload.lines.last { $0["status"] as? String == "failed" }
    #expect(failure?["kind"] as? String == "timedOut", "\(upload.printed)")
    #expect(try await setup.backend.photos().isEmpty)
  }
}
