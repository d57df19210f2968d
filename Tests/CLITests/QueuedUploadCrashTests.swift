import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierTestSupport
import Foundation
import Testing

/// The store's crash discipline for queued uploads (decision 1302): a real `courier upload
/// --queue` stopped by itself (`COURIER_TEST_STOP_AT`, `raise(SIGSTOP)`) exactly after its bytes
/// are durable and before its entry is committed, or just after the commit, then killed with
/// SIGKILL once /proc says it is stopped: the data folder holds both or neither.
@Suite("courier upload --queue killed between bytes and entry", .serialized, .sharedBackend)
struct QueuedUploadCrashTests {
  let cli = CLIFixture("courier-queue-crash")

  /// The state letter of a process in /proc (`T` when stopped), nil once it is gone.
  static func state(of pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(after: close)...].first { $0 != " " }
  }

  /// Starts `courier upload --queue FILE` stopping at `point`, waits until it is stopped
  /// there, kills it with SIGKILL and returns its standard error.
  func queueAndKill(at point: String, file: URL, dataDir: URL, backend: ReferenceBackend)
    async throws -> String
  {
    let process = try cli.process(
      backend.url.absoluteString, ["upload", "--queue", file.path], dataDir: dataDir,
      environment: ["COURIER_TEST_STOP_AT": point])
    let errors = dataDir.appendingPathComponent("stderr-\(point).txt")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let pid = process.processIdentifier
    let deadline = ContinuousClock.now + .seconds(120)
    while Self.state(of: pid) != "T" {
      let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
      try #require(process.isRunning, "courier ended before \(point): \(stderr)")
      try #require(ContinuousClock.now < deadline, "courier never stopped at \(point): \(stderr)")
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(pid, SIGKILL)
    #expect(await process.exited(within: .seconds(120)))
    #expect(process.terminationReason == .uncaughtSignal)
    return (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
  }

  func entries(_ backend: ReferenceBackend, _ dir: URL) async throws -> [[String: Any]] {
    let listing = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    return try #require(listing["entries"] as? [[String: Any]])
  }

  func dataFolder(_ backend: ReferenceBackend) async throws -> (URL, URL) {
    let dir = try await cli.client(backend)
    let file = dir.appendingPathComponent("clip.bin")
    try Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: file)
    return (dir, file)
  }

  @Test("killed after the bytes are durable, before the entry: neither, once the store opens")
  func killedBeforeCommit() async throws {
    let backend = try await SharedBackend.fresh()
    let (dir, file) = try await dataFolder(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let stderr = try await queueAndKill(
      at: "queued-upload-written", file: file, dataDir: dir, backend: backend)
    // The kill came between the two: the bytes are there, no entry points to them.
    #expect(
      CLIFixture.queuedUploads(in: dir).count == 1, "\(CLIFixture.queuedUploads(in: dir)) \(stderr)"
    )
    #expect(CLIFixture.queuedUploads(in: dir).first?.hasSuffix(".body") == true)
    #expect(try await entries(backend, dir).isEmpty)
    #expect(
      CLIFixture.queuedUploads(in: dir).isEmpty, "the sweep removed the bytes no entry points to")
  }

  @Test("killed just after the entry is committed: both, and sync sends it")
  func killedAfterCommit() async throws {
    let backend = try await SharedBackend.fresh()
    let (dir, file) = try await dataFolder(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let stderr = try await queueAndKill(
      at: "queued-upload-committed", file: file, dataDir: dir, backend: backend)
    let listed = try await entries(backend, dir)
    #expect(listed.count == 1, "\(stderr)")
    let entry = try #require(listed.first)
    #expect(entry["collection"] as? String == "uploads")
    let id = try #require(entry["id"] as? String)
    #expect(CLIFixture.queuedUploads(in: dir) == ["\(id).body"])
    let body = dir.appendingPathComponent("queued-uploads/\(id).body")
    #expect(try Data(contentsOf: body) == (try Data(contentsOf: file)))
    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let uploads = try await CLIFixture.uploads(backend)
    #expect(uploads.count == 1)
    #expect(uploads.first?["state"] as? String == "completed")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }
}
