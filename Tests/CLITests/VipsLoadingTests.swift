import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// libvips is loaded on the first compression, not at start-up (decision 0353): the binary
/// does not link it, a missing libvips is an error that names it and says what to do, and
/// `--no-compress` works without it. Run as real processes: the test process has libvips
/// loaded already.
@Suite("libvips loaded on first use")
struct VipsLoadingTests {
  struct Result {
    let code: Int32
    let stdout: String
    let stderr: String
  }

  /// Runs `courier` with exactly these variables, off the concurrency pool, its output in files
  /// (`ChildProcess.run`: no pipe can fill up, whatever the loader logs).
  static func courier(_ arguments: [String], environment: [String: String]) async throws
    -> Result
  {
    let binary = try InProcessCLI.builtCourier()
    let run = try await ChildProcess.run([binary.path] + arguments, environment: environment)
    return Result(code: run.status, stdout: run.stdout, stderr: run.stderr)
  }

  /// A folder with a JPEG's first bytes in it (sniffed as an image, so an upload compresses
  /// it), and the environment of a logged-in `courier` against `backend`.
  static func photoAndSession(_ name: String, backend: ReferenceBackend) async throws
    -> (dir: URL, photo: URL, environment: [String: String])
  {
    let dir = try InProcessCLI.temporaryDirectory(name)
    let photo = dir.appendingPathComponent("photo.jpg")
    try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0xFF, 0xD9])
      .write(to: photo)
    let (_, body) = try await backend.call(
      "POST", "/auth/token", json: #"{"username":"alice","password":"secret"}"#)
    let token = try #require(
      (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["access_token"] as? String)
    let environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
      "COURIER_BASE_URL": backend.url.absoluteString,
      "COURIER_DATA_DIR": dir.appendingPathComponent("data").path, "COURIER_TOKEN": token,
    ]
    return (dir, photo, environment)
  }

  @Test("courier does not link libvips")
  func notLinked() async throws {
    let binary = try InProcessCLI.builtCourier()
    let linked = try await Tool.run("/usr/bin/ldd", [binary.path])
    #expect(!linked.contains("libvips"), "\(linked)")
    #expect(linked.contains("libc.so"))
  }

  @Test("without libvips: an image is refused naming the library; --no-compress sends it")
  func missingLibrary() async throws {
    let backend = try await ReferenceBackend()
    defer { backend.stop() }
    let (dir, photo, session) = try await Self.photoAndSession("courier-novips", backend: backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    var withToken = session
    withToken["COURIER_LIBVIPS"] = dir.appendingPathComponent("no-such/libvips.so.42").path

    let compressed = try await Self.courier(["upload", photo.path], environment: withToken)
    #expect(compressed.code == 65, "\(compressed.stderr)")
    #expect(compressed.stderr.contains("libvips (libvips.so.42) is not installed"))
    #expect(compressed.stderr.contains("--no-compress"))

    let plain = try await Self.courier(
      ["upload", "--no-compress", photo.path, "--json"], environment: withToken)
    #expect(plain.code == 0, "\(plain.stderr)")
    let photos = try await backend.log().filter {
      ($0["method"] as? String) == "POST" && ($0["path"] as? String) == "/photos"
    }
    #expect(photos.count == 1)
    #expect(photos.first?["status"] as? Int == 201)
  }

  /// Issue 14: a command pays only for what it uses. With libvips installed, an upload that
  /// compresses loads it (the loader's own log, `LD_DEBUG=files` written to files by
  /// `LD_DEBUG_OUTPUT`, names it: the control that shows the log sees a `dlopen`), and the same
  /// upload with `--no-compress` does not.
  @Test("with libvips installed, --no-compress of a JPEG does not load it")
  func noCompressLoadsNothing() async throws {
    let backend = try await ReferenceBackend()
    defer { backend.stop() }
    let (dir, photo, session) = try await Self.photoAndSession(
      "courier-vips-unused", backend: backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    var environment = session
    environment["LD_DEBUG"] = "files"
    /// Runs one upload with the loader's log in its own folder; returns the run and the log.
    func upload(_ arguments: [String], log name: String) async throws -> (Result, String) {
      let folder = dir.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      var withLog = environment
      withLog["LD_DEBUG_OUTPUT"] = folder.appendingPathComponent("ld").path
      let run = try await Self.courier(arguments, environment: withLog)
      let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      let log = try files.map {
        try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
      }.joined()
      return (run, log)
    }
    let (compressing, compressingLog) = try await upload(["upload", photo.path], log: "compress")
    #expect(compressingLog.contains("libvips.so"), "\(compressing.stderr)")

    let (plain, plainLog) = try await upload(
      ["upload", "--no-compress", photo.path], log: "plain")
    #expect(plain.code == 0, "\(plain.stderr)")
    #expect(!plainLog.isEmpty)
    #expect(!plainLog.contains("libvips"), "\(plainLog.suffix(2000))")
    #expect(plain.stderr.contains("any location data included"), "\(plain.stderr)")
  }
}
