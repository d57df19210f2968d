import CourierCLI
import CourierCLITestSupport
import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier upload` in-process against the real reference backend: one backend per test, real
/// libvips compression, real transports (libcurl by default, URLSession where cheap).
@Suite("courier upload against the reference backend", .serialized, .sharedBackend)
struct UploadIntegrationTests {
  static let transports = ["curl", "urlsession"]

  let cli = CLIFixture("courier-upload-it", environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])

  func posts(_ backend: ReferenceBackend, _ path: String = "/photos") async throws -> [[String:
    Any]]
  {
    try await backend.log().filter {
      ($0["method"] as? String) == "POST" && ($0["path"] as? String) == path
    }
  }

  /// A real JPEG made by ImageMagick, optionally with EXIF GPS coordinates written by hand.
  func makeJPEG(in directory: URL, width: Int, height: Int, gps: Bool) async throws -> URL {
    let url = directory.appendingPathComponent("photo.jpg")
    try await Tool.run(
      "/usr/bin/convert",
      ["-size", "\(width)x\(height)", "plasma:fractal", "-quality", "95", url.path])
    if gps { try EXIFWriter.insertGPS(into: url) }
    return url
  }

  @Test(
    "503 twice then success: 3 POSTs with one key, exactly one photo stored", arguments: transports)
  func retriesStoreOnePhoto(_ transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 640, height: 480, gps: false)
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":2,"status":503,"path":"/photos"}"#)
    let result = await cli.run(
      backend, ["upload", photo.path, "--title", "Beach", "--transport", transport], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stderr.contains("server busy (503), retrying in"))
    #expect(result.output.stderr.contains("attempt 3 of 4"))
    let response = try #require(
      try JSONSerialization.jsonObject(with: Data(result.output.stdout.utf8)) as? [String: Any])
    #expect(response["title"] as? String == "Beach")
    let stored = try await CLIFixture.photos(backend)
    #expect(stored.count == 1)
    #expect(stored.first?["id"] as? String == response["id"] as? String)
    let attempts = try await posts(backend)
    #expect(attempts.compactMap { $0["status"] as? Int } == [503, 503, 201])
    let keys = Set(attempts.compactMap { $0["idempotency_key"] as? String })
    #expect(keys.count == 1)
  }

  @Test("on a terminal: a progress bar redrawn with \\r on standard error, and a retry line")
  func terminalProgress() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 800, height: 600, gps: false)
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":1,"status":503,"path":"/photos"}"#)
    let output = TerminalOutput()
    let runner = CommandRunner(
      environment: ["HOME": dir.path, "COURIER_RETRY_BASE_DELAY_MS": "10"], output: output)
    let code = await runner.run([
      "--base-url", backend.url.absoluteString, "--data-dir", dir.path, "upload", photo.path,
    ])
    #expect(code == 0, "\(output.stderr)")
    #expect(output.stderr.contains("\r[########################] 100%"))
    // The bar is ended with a newline before the retry line, so it starts a line of its own.
    #expect(output.stderr.contains("\ncourier: server busy (503), retrying in"))
    #expect(output.stdout.hasPrefix("{"))
    #expect(!output.stdout.contains("\r"))
  }

  @Test("--json: one object per event, then the result", arguments: transports)
  func jsonEvents(_ transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 300, height: 200, gps: false)
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":1,"status":503,"path":"/photos"}"#)
    let result = await cli.run(
      backend, ["upload", photo.path, "--json", "--transport", transport], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let lines = result.output.stdout.split(separator: "\n").map(String.init)
    let objects = try lines.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let events = objects.compactMap { $0["event"] as? String }
    #expect(events.first == "compressing")
    #expect(events.contains("prepared"))
    #expect(events.contains("retrying"))
    #expect(events.contains("progress"))
    let last = try #require(objects.last)
    #expect(last["status"] as? String == "ok")
    #expect(last["attempts"] as? Int == 2)
    #expect(last["http_status"] as? Int == 201)
    #expect((last["body"] as? [String: Any])?["content_type"] as? String == "image/jpeg")
  }

  @Test("422 image_too_large: the server's message, exit 65, exactly one attempt")
  func tooLarge() async throws {
    let backend = try await SharedBackend.fresh()
    try await backend.call("POST", "/__config", json: #"{"max_upload":2000}"#)
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 400, height: 300, gps: false)
    let result = await cli.run(backend, ["upload", photo.path, "--no-compress"], dataDir: dir)
    #expect(result.code == 65)
    let message = result.output.stderr.split(separator: "\n").last.map(String.init) ?? ""
    #expect(message.hasPrefix("courier: "))
    #expect(!message.contains("422"))
    #expect(message.count > "courier: ".count + 10)
    #expect(try await posts(backend).compactMap { $0["status"] as? Int } == [422])
    #expect(try await CLIFixture.photos(backend).isEmpty)
  }

  @Test("an expired access token is refreshed once and the upload replayed with the same key")
  func refreshesToken() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    // An access token the server no longer knows, with the real refresh token: a 401 follows.
    let session = dir.appendingPathComponent("session.json")
    var stored = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: session)) as? [String: Any])
    let accessKey = try #require(stored.keys.first { $0.lowercased().hasPrefix("access") })
    stored[accessKey] = "expired-token"
    try JSONSerialization.data(withJSONObject: stored).write(to: session)
    let photo = try await makeJPEG(in: dir, width: 320, height: 240, gps: false)
    let result = await cli.run(backend, ["upload", photo.path], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let log = try await backend.log().compactMap { entry -> String? in
      guard let path = entry["path"] as? String, let status = entry["status"] as? Int,
        path != "/health"
      else { return nil }
      return "\(path) \(status)"
    }
    #expect(Array(log.suffix(3)) == ["/photos 401", "/auth/refresh 200", "/photos 201"])
    let keys = Set(try await posts(backend).compactMap { $0["idempotency_key"] as? String })
    #expect(keys.count == 1)
    #expect(try await CLIFixture.photos(backend).count == 1)
  }

  @Test("connection refused: the unreachable message and exit 69", arguments: transports)
  func refused(_ transport: String) async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 64, height: 64, gps: false)
    let output = CapturedOutput()
    let runner = CommandRunner(
      environment: ["HOME": dir.path, "COURIER_RETRY_BASE_DELAY_MS": "10"], output: output)
    let code = await runner.run([
      "--base-url", "http://127.0.0.1:\(freeLoopbackPort())", "--data-dir", dir.path,
      "--transport", transport, "upload", photo.path, "--max-attempts", "2",
    ])
    #expect(code == 69)
    #expect(output.stderr.contains("can't be reached"))
  }

  @Test("a missing file: exit 66 naming it, and no request at all")
  func missingFile() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let before = try await backend.log().count
    let missing = dir.appendingPathComponent("nowhere.jpg").path
    let result = await cli.run(backend, ["upload", missing], dataDir: dir)
    #expect(result.code == 66)
    #expect(result.output.stderr == "courier: The file nowhere.jpg doesn't exist.\n")
    #expect(try await backend.log().count == before)
  }

  @Test("a 3000×2000 JPEG with GPS arrives as a JPEG ≤ 2048 px without GPS", arguments: transports)
  func compressesAndStripsLocation(_ transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = try await makeJPEG(in: dir, width: 3000, height: 2000, gps: true)
    let original = try Data(contentsOf: photo)
    #expect(original.range(of: Data("Exif\0\0".utf8)) != nil)
    let result = await cli.run(
      backend, ["upload", photo.path, "--json", "--transport", transport], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stdout.contains(#""event":"prepared""#))
    #expect(result.output.stdout.contains(#""reason":"compressed""#))
    let stored = try #require(try await CLIFixture.photos(backend).first)
    #expect(stored["content_type"] as? String == "image/jpeg")
    #expect(stored["sha256"] as? String != TestDigest.sha256Hex(original))
    #expect((stored["size"] as? Int).map { $0 != original.count } == true)
    // Read it back and look at it with ImageMagick.
    let id = try #require(stored["id"] as? String)
    let bearer = try await CLIFixture.token(backend)
    let (status, body) = try await backend.call(
      "GET", "/photos/\(id)", headers: ["Authorization": "Bearer \(bearer)"])
    #expect(status == 200)
    let received = dir.appendingPathComponent("received.jpg")
    try body.write(to: received)
    let size = try await Tool.run("/usr/bin/identify", ["-format", "%m %w %h", received.path])
    let fields = size.split(separator: " ")
    #expect(fields.first == "JPEG")
    let dimensions = fields.dropFirst().compactMap { Int($0) }
    #expect(dimensions.first == 2048)
    #expect(dimensions.last.map { (1365...1366).contains($0) } == true)
    #expect(body.range(of: Data("Exif\0\0".utf8)) == nil)
    let gps = try await Tool.run("/usr/bin/identify", ["-format", "%[EXIF:GPS*]", received.path])
    #expect(gps.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
  }

  @Test("a tiny PNG that compression would grow is sent as it is, never the bigger JPEG")
  func tinyPNGAsIs() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("icon.png")
    try await Tool.run("/usr/bin/convert", ["-size", "64x64", "pattern:checkerboard", file.path])
    let original = try Data(contentsOf: file)
    let target = backend.url.absoluteString + "/upload"
    let result = await cli.run(backend, ["upload", file.path, "--to", target], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stderr.contains("the original is sent"), "\(result.output.stderr)")
    let echo = try #require(
      try JSONSerialization.jsonObject(with: Data(result.output.stdout.utf8)) as? [[String: Any]])
    let filePart = try #require(echo.first { $0["field"] as? String == "file" })
    #expect(filePart["content_type"] as? String == "image/png")
    #expect(filePart["sha256"] as? String == TestDigest.sha256Hex(original))
  }

  @Test("a non-image file is sent as is, with its own media type", arguments: transports)
  func nonImageAsIs(_ transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let text = Data("plain notes, not a photo\n".utf8)
    let file = dir.appendingPathComponent("notes.txt")
    try text.write(to: file)
    let target = backend.url.absoluteString + "/upload"
    let result = await cli.run(
      backend,
      ["upload", file.path, "--to", target, "--field", "album=misc", "--transport", transport],
      dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stderr.contains("notes.txt is not an image: sent as is."))
    let echo = try #require(
      try JSONSerialization.jsonObject(with: Data(result.output.stdout.utf8)) as? [[String: Any]])
    let filePart = try #require(echo.first { $0["field"] as? String == "file" })
    #expect(filePart["content_type"] as? String == "text/plain")
    #expect(filePart["sha256"] as? String == TestDigest.sha256Hex(text))
    #expect(echo.contains { $0["field"] as? String == "album" && $0["value"] as? String == "misc" })
    #expect(
      echo.contains { $0["field"] as? String == "title" && $0["value"] as? String == "notes.txt" })
  }

  @Test("the temporary files of an upload killed with -9 are removed by the next upload")
  func killedUploadLeftovers() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let scratch = dir.appendingPathComponent("tmp")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    let photo = try await makeJPEG(in: dir, width: 3000, height: 2000, gps: false)
    func leftovers() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter {
        $0.hasPrefix("courier-")
      }
    }
    func courier() throws -> Process {
      try cli.process(
        backend.url.absoluteString, ["upload", photo.path, "--transport", "urlsession"],
        dataDir: dir, environment: ["TMPDIR": scratch.path])
    }
    // The server holds the upload's POST until released: it is killed while its files exist,
    // however long the compression takes (a 20 s delay only made that likely).
    try await backend.call("POST", "/__hold", json: #"{"after":0,"method":"POST"}"#)
    let doomed = try courier()
    try doomed.run()
    let deadline = ContinuousClock.now + .seconds(30)
    while try leftovers().isEmpty, doomed.isRunning, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    kill(doomed.processIdentifier, SIGKILL)
    while doomed.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    let left = try leftovers()
    #expect(!left.isEmpty, "the killed upload had made no temporary file")
    #expect(
      left.allSatisfy {
        CourierTemporaryFile.owner(ofFileNamed: $0) == doomed.processIdentifier
      }, "\(left)")

    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    let next = try courier()
    try next.run()
    while next.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    #expect(next.terminationStatus == 0)
    let remaining = try leftovers()
    #expect(remaining.isEmpty, "\(remaining)")
  }
}

/// Output captured as if both streams were a terminal.
final class TerminalOutput: CommandOutput {
  private let captured = CapturedOutput()
  func out(_ text: String) { captured.out(text) }
  func err(_ text: String) { captured.err(text) }
  var isTerminal: Bool { true }
  var useColor: Bool { false }
  func readStandardInput() -> String? { nil }
  var stdout: String { captured.stdout }
  var stderr: String { captured.stderr }
}

/// SHA-256 through the system's `sha256sum`, so the test needs no crypto library.
enum TestDigest {
  static func sha256Hex(_ data: Data) -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID())")
    defer { try? FileManager.default.removeItem(at: url) }
    guard (try? data.write(to: url)) != nil else { return "" }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [url.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return "" }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(String(decoding: output, as: UTF8.self).prefix(64))
  }
}

/// Writes an EXIF APP1 segment holding GPS coordinates right after a JPEG's SOI marker (the
/// same bytes the Vips tests use; ImageMagick cannot write GPS tags).
enum EXIFWriter {
  static func insertGPS(into jpeg: URL) throws {
    let original = try Data(contentsOf: jpeg)
    try #require(original.starts(with: [0xFF, 0xD8]))
    var bytes: [UInt8] = Array("Exif\0\0".utf8) + [0x49, 0x49, 0x2A, 0x00]
    func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    func u32(_ value: UInt32) {
      for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> shift) & 0xFF)) }
    }
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
    func entry(_ tag: UInt16, _ type: UInt16, _ count: UInt32, _ value: [UInt8]) {
      u16(tag)
      u16(type)
      u32(count)
      bytes += value + [UInt8](repeating: 0, count: 4 - value.count)
    }
    u32(8)
    let gpsOffset = UInt32(8 + 2 + 12 + 4)
    u16(1)
    entry(0x8825, 4, 1, le32(gpsOffset))
    u32(0)
    let rationals = gpsOffset + UInt32(2 + 5 * 12 + 4)
    u16(5)
    entry(0x0000, 1, 4, [2, 2, 0, 0])
    entry(0x0001, 2, 2, Array("N\0".utf8))
    entry(0x0002, 5, 3, le32(rationals))
    entry(0x0003, 2, 2, Array("E\0".utf8))
    entry(0x0004, 5, 3, le32(rationals + 24))
    u32(0)
    for value: UInt32 in [48, 51, 29, 2, 17, 40] {
      u32(value)
      u32(1)
    }
    var app1 = Data([0xFF, 0xE1])
    let length = UInt16(bytes.count + 2)
    app1.append(contentsOf: [UInt8(length >> 8), UInt8(length & 0xFF)])
    app1.append(contentsOf: bytes)
    try (original.prefix(2) + app1 + original.dropFirst(2)).write(to: jpeg)
  }
}
