import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A 1 GiB upload whose peak memory stays where a 1 MiB upload's is: the built `courier`
/// binary, measured by /usr/bin/time, sending to the backend's discard sink on loopback.
/// (Memory, not time: the speed comparison with `curl -F` is in Docs/benchmarks/upload.md.)
@Suite("courier upload memory stays flat", .serialized)
struct UploadMemoryTests {
  static let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0])
    .deletingLastPathComponent()

  /// Peak resident set of one `courier upload` of a sparse file of `size` bytes, in KiB.
  static func peakKiB(size: Int64, transport: String, sink: Int, in directory: URL) throws -> Int {
    let file = directory.appendingPathComponent("payload-\(size).bin")
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    let handle = try FileHandle(forWritingTo: file)
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
    defer { try? FileManager.default.removeItem(at: file) }
    let report = directory.appendingPathComponent("time-\(size)-\(transport).txt")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = [
      "-f", "%M", "-o", report.path, Self.binDirectory.appendingPathComponent("courier").path,
      // The sink is the base URL: the CLI refuses --to on another origin (decision 0005).
      "--base-url", "http://127.0.0.1:\(sink)", "upload", file.path, "--no-compress",
      "--to", "http://127.0.0.1:\(sink)/", "--transport", transport, "--timeout", "120", "--json",
    ]
    process.environment = ["HOME": directory.path, "PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "upload of \(size) bytes with \(transport)")
    let text = try String(contentsOf: report, encoding: .utf8)
    return Int(text.split(separator: "\n").last.map(String.init) ?? "") ?? -1
  }

  @Test("1 GiB peaks within 32 MiB of 1 MiB", arguments: ["curl", "urlsession"])
  func flat(transport: String) async throws {
    try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"))
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-rss-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let sink = try await Sink()
    defer { sink.stop() }
    let port = sink.port
    // Off the concurrency pool: a 1 GiB upload over URLSession takes tens of seconds.
    let small = try await offPool {
      try Self.peakKiB(size: 1 << 20, transport: transport, sink: port, in: directory)
    }
    let large = try await offPool {
      try Self.peakKiB(size: 1 << 30, transport: transport, sink: port, in: directory)
    }
    #expect(small > 0)
    #expect(large - small < 32 * 1024, "1 MiB: \(small) KiB, 1 GiB: \(large) KiB")
  }
}

/// The backend's discard sink on a free loopback port.
final class Sink: Sendable {
  let port: Int
  private let process: Process

  init() async throws {
    port = freeLoopbackPort()
    let root = ReferenceBackend.repositoryRoot
    let process = Process()
    process.executableURL = root.appendingPathComponent("Backend/.venv/bin/python")
    process.arguments = ["-m", "courier_backend.sink", "--port", String(port)]
    process.currentDirectoryURL = root.appendingPathComponent("Backend")
    var environment = ProcessInfo.processInfo.environment
    environment["COURIER_BACKEND_EXIT_WITH_PARENT"] = "1"
    process.environment = environment
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    self.process = process
    // Bounded wait for the sink to accept connections.
    let deadline = ContinuousClock.now + .seconds(30)
    while !Self.accepts(port) {
      guard ContinuousClock.now < deadline, process.isRunning else {
        throw POSIXError(.ECONNREFUSED)
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  static func accepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  /// SIGKILL: the sink keeps nothing, and a child started from a concurrency thread inherits
  /// a signal mask that blocks SIGTERM.
  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    // Belt and braces: nothing of ours may outlive the test process.
    let sweep = Process()
    sweep.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
    sweep.arguments = ["-9", "-f", "courier_backend.sink --port \(port)$"]
    try? sweep.run()
    sweep.waitUntilExit()
  }
}
