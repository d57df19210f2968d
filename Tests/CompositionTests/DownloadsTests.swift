import CourierLinux
import CourierSystem
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// `CourierSession.downloads`, the public door to resumable, digest-checked, cached downloads
/// (decision 2506), used the way a library user does (no `@testable`), against the reference
/// backend's `GET /photos/{id}`.
@Suite("CourierSession.downloads against the reference backend", .sharedBackend, .serialized)
struct DownloadsTests {
  func session(_ backend: ReferenceBackend, _ dir: URL) async throws -> CourierSession {
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = backend.url
    config.dataDirectory = dir.appendingPathComponent("data")
    let courier = try CourierSession(config: config)
    try await courier.login(username: "alice", password: "secret")
    return courier
  }

  func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-downloads-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  func place(_ backend: ReferenceBackend, id: String, size: Int) async throws -> String {
    let (status, body) = try await backend.call(
      "POST", "/__photos", json: #"{"id":"\#(id)","size":\#(size)}"#)
    try #require(status == 201)
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try #require(object["sha256"] as? String)
  }

  func sha256(_ file: URL) throws -> String { SHA256.hex(SHA256.hash(try Data(contentsOf: file))) }

  @Test("a file comes down with progress into the cache; again, it is the kept copy (a 304)")
  func downloadedAndKept() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try await session(backend, dir)
    let size = 2 * 1024 * 1024 + 5
    let digest = try await place(backend, id: "lib", size: size)
    let steps = Mutex<[TransferProgress]>([])
    let file = try await courier.downloads.file("/photos/lib") { step in
      steps.withLock { $0.append(step) }
    }
    #expect(try sha256(file) == digest)
    #expect(file.path.hasPrefix(dir.appendingPathComponent("data/cache").path), "\(file.path)")
    let seen = steps.withLock { $0 }
    #expect(!seen.isEmpty)
    #expect(seen.last.map { $0.sent == Int64(size) && $0.total == Int64(size) } == true)

    let again = try await courier.downloads.file("/photos/lib", pinned: true)
    #expect(again == file)
    let (_, served) = try await backend.call("GET", "/__photos/served")
    let log = try #require(try JSONSerialization.jsonObject(with: served) as? [[String: Any]])
    #expect(log.compactMap { $0["status"] as? Int } == [200, 200, 304], "\(log)")
  }

  @Test("to a file of the caller's: written there, not kept in the cache")
  func toOutput() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try await session(backend, dir)
    let digest = try await place(backend, id: "mine", size: 100_000)
    let output = dir.appendingPathComponent("mine.bin")
    let file = try await courier.downloads.file("/photos/mine", to: output)
    #expect(file == output)
    #expect(try sha256(output) == digest)
    let bodies = dir.appendingPathComponent("data/cache/bodies")
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: bodies.path)) ?? []).isEmpty)
  }

  @Test("another server's URL is refused before anything is sent: the token stays home")
  func otherServer() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try await session(backend, dir)
    await #expect(throws: CourierError.self) {
      _ = try await courier.downloads.file("http://127.0.0.1:9/photos/x")
    }
  }

  @Test("two calls for the same file at once: one body crosses, both return the kept file")
  func concurrentCallsShareOneDownload() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try await session(backend, dir)
    let size = 2 * 1024 * 1024 + 7
    let digest = try await place(backend, id: "twice", size: size)
    // A second a body: the calls overlap.
    let (status, _) = try await backend.call(
      "POST", "/__photos/twice/serve", json: #"{"rate":2097152}"#)
    try #require(status == 200)
    async let first = courier.downloads.file("/photos/twice")
    async let second = courier.downloads.file("/photos/twice")
    let (one, two) = try await (first, second)
    #expect(one == two)
    #expect(try sha256(one) == digest)
    let (_, served) = try await backend.call("GET", "/__photos/served")
    let log = try #require(try JSONSerialization.jsonObject(with: served) as? [[String: Any]])
    let bytes = log.compactMap { $0["bytes"] as? Int }.reduce(0, +)
    #expect(Double(bytes) <= 1.05 * Double(size), "\(log)")
    #expect(log.filter { $0["method"] as? String == "GET" }.count == 1, "\(log)")
  }
}
