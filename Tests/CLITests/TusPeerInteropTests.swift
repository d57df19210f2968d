import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `courier upload --resumable --to` an independent tus server: tuspyserver from PyPI, started
/// by `Backend/tus-peer.sh` on a free port (decision 1301: interoperability, not only our own
/// backend). It offers no checksum extension, needs `filename` and `filetype` metadata and a
/// `Content-Length` on each `PATCH` (Docs/tus.md).
@Suite("courier upload --resumable against tuspyserver", .serialized)
struct TusPeerInteropTests {
  /// A started peer, stopped with SIGTERM (it also ends itself when this process ends).
  final class Peer: Sendable {
    let process: Process
    let url: URL
    let directory: URL

    init() async throws {
      let port = freeLoopbackPort()
      directory = try InProcessCLI.temporaryDirectory("courier-tus-peer")
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/bash")
      process.arguments = [
        ReferenceBackend.repositoryRoot.appendingPathComponent("Backend/tus-peer.sh").path,
        String(port), directory.path,
      ]
      process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
      process.standardError = FileHandle(forWritingAtPath: "/dev/null")
      try process.run()
      self.process = process
      url = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
      // The first start builds a virtualenv from PyPI: a generous bound, checked often.
      let deadline = ContinuousClock.now + .seconds(300)
      while ContinuousClock.now < deadline {
        try #require(process.isRunning, "tus-peer.sh ended before answering /health")
        if await Self.healthy(url) { return }
        try await Task.sleep(for: .milliseconds(100))
      }
      stop()
      throw POSIXError(.ETIMEDOUT)
    }

    static func healthy(_ url: URL) async -> Bool {
      var request = URLRequest(url: url.appendingPathComponent("health"))
      request.timeoutInterval = 2
      guard let (_, response) = try? await URLSession.shared.data(for: request) else {
        return false
      }
      return (response as? HTTPURLResponse)?.statusCode == 200
    }

    func stored(_ id: String) async throws -> Data {
      let (data, response) = try await URLSession.shared.data(
        from: url.appendingPathComponent("__files/\(id)"))
      try #require((response as? HTTPURLResponse)?.statusCode == 200)
      return data
    }

    func stop() {
      if process.isRunning { process.terminate() }
      try? FileManager.default.removeItem(at: directory)
    }
  }

  @Test("a whole upload (two chunks and a bit): the peer stores the file's exact bytes")
  func wholeUpload() async throws {
    let peer = try await Peer()
    defer { peer.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-tus-peer-client")
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 9 * 1024 * 1024 + 77
    let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
    let file = dir.appendingPathComponent("clip.bin")
    try bytes.write(to: file)
    let result = await InProcessCLI.run(
      peer.url.absoluteString,
      [
        "upload", "--resumable", file.path, "--to", peer.url.absoluteString + "/files/",
        "--title", "Interop", "--json",
      ], dataDir: dir, environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])
    #expect(result.code == 0, "\(result.output.stderr)")
    let last = try #require(result.lines.last)
    #expect(last["status"] as? String == "ok")
    let uploadURL = try #require((last["upload_url"] as? String).flatMap(URL.init(string:)))
    #expect(uploadURL.host == "127.0.0.1")
    let stored = try await peer.stored(uploadURL.lastPathComponent)
    #expect(stored.count == size)
    #expect(SHA256.hex(SHA256.hash(stored)) == SHA256.hex(SHA256.hash(bytes)))
    let records =
      (try? FileManager.default.contentsOfDirectory(
        atPath: dir.appendingPathComponent("uploads").path)) ?? []
    #expect(records.filter { $0.hasSuffix(".json") }.isEmpty)
  }

  @Test("a queued upload, no login: sync finds the peer speaks tus and it stores the exact bytes")
  func queuedWithoutLogin() async throws {
    let peer = try await Peer()
    defer { peer.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-tus-peer-queue")
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 5 * 1024 * 1024 + 3
    let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ $0 >> 11) })
    let file = dir.appendingPathComponent("clip.bin")
    try bytes.write(to: file)
    let base = peer.url.absoluteString
    let queued = await InProcessCLI.run(
      base, ["upload", "--queue", file.path, "--to", base + "/files/", "--json"], dataDir: dir)
    #expect(queued.code == 0, "\(queued.output.stderr)")
    #expect(queued.lines.last?["transfer"] as? String == "auto")
    let sync = await InProcessCLI.run(
      base, ["--verbose", "sync", "--json"], dataDir: dir,
      environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])
    #expect(sync.code == 0, "\(sync.output.stderr)")
    #expect(sync.lines.last?["sent"] as? Int == 1, "\(sync.output.stdout)")
    // No session: no token went anywhere.
    #expect(!sync.output.stderr.contains("Authorization"), "\(sync.output.stderr)")
    #expect(sync.output.stderr.contains("OPTIONS"), "auto asked the target first")
    let names = try FileManager.default.contentsOfDirectory(atPath: peer.directory.path)
    let stored = try names.compactMap { name -> Data? in
      let url = peer.directory.appendingPathComponent(name)
      let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
      return size?.intValue == bytes.count ? try Data(contentsOf: url) : nil
    }
    #expect(stored.count == 1, "\(names)")
    #expect(stored.first.map { SHA256.hex(SHA256.hash($0)) } == SHA256.hex(SHA256.hash(bytes)))
  }
}
