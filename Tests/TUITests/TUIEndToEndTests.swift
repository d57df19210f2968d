import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `Tests/TUI/e2e.sh`: courier-tui in tmux, in a network namespace of its own, against
/// the reference backend in another; the network goes down and comes back for real.
@Suite("courier-tui end to end", .serialized)
struct TUIEndToEndTests {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The courier-tui built next to this test binary.
  static var binary: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("courier-tui")
  }

  @Test("add/upload online, add offline, resync, terminal restored, restart on the saved copy")
  func offlineRoundTrip() async throws {
    try #require(
      getuid() == 0,
      "this test creates network namespaces and must run as root (CI runs as root).")
    try #require(
      FileManager.default.isExecutableFile(atPath: Self.binary.path),
      "courier-tui is not built at \(Self.binary.path): run `swift build --product courier-tui`.")
    let result = try await Self.run(
      script: Self.root.appendingPathComponent("Tests/TUI/e2e.sh").path,
      arguments: [Self.binary.path], deadline: .seconds(240))
    #expect(result.status == 0, "e2e.sh failed:\n\(result.output)")
    #expect(result.output.contains("PASS"), "e2e.sh did not reach the end:\n\(result.output)")
  }

  /// Runs a script and waits (off the concurrency pool) for it, killing it past the deadline.
  static func run(script: String, arguments: [String], deadline: Duration) async throws
    -> (status: Int32, output: String)
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [script] + arguments
    let output = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-tui-e2e-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    defer { try? FileManager.default.removeItem(at: output) }
    try process.run()
    let status = await withCheckedContinuation {
      (continuation: CheckedContinuation<Int32, Never>) in
      let waiter = Thread {
        let end = ContinuousClock.now + deadline
        while process.isRunning && ContinuousClock.now < end { usleep(50_000) }
        // SIGTERM lets the script's trap remove the namespaces it made.
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        continuation.resume(returning: process.terminationStatus)
      }
      waiter.start()
    }
    try handle.close()
    let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    return (status, text)
  }
}
