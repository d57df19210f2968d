import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A long-running `courier` (`watch`, `sync --watch`) in a network namespace, its standard
/// output read line by line: what the namespace tests of `courier watch`, the D-Bus path facts
/// and the path policy's end-to-end test share. A watchdog kills it if a test never gets what
/// it waits for.
final class WatchedCourier {
  let process = Process()
  private var output: AsyncStream<String>.Iterator
  private let watchdog: Task<Void, any Error>

  /// Starts `courier ARGUMENTS` in `namespace` (`ip netns exec` execs it: the pid is
  /// courier's own).
  /// - Parameters:
  ///   - arguments: the command's arguments (the binary is the built `courier`).
  ///   - namespace: the network namespace.
  ///   - environment: its environment; the test's when nil.
  init(_ arguments: [String], in namespace: String, environment: [String: String]? = nil)
    throws
  {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
      ["ip", "netns", "exec", namespace, PathCommandsTests.courier.path] + arguments
    if let environment { process.environment = environment }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    output = lines(of: pipe.fileHandleForReading).makeAsyncIterator()
    let process = process
    watchdog = Task {
      try await Task.sleep(for: .seconds(90))
      kill(process.processIdentifier, SIGKILL)
    }
  }

  deinit {
    watchdog.cancel()
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }

  /// The next line holding every one of `texts` (the lines before it are skipped).
  /// - Parameter texts: what the line must contain.
  /// - Returns: the line.
  /// - Throws: `ETIMEDOUT` when the output ends first (the watchdog killed it).
  func next(containing texts: String...) async throws -> String {
    while let line = await output.next() {
      if texts.allSatisfy(line.contains) { return line }
    }
    throw POSIXError(.ETIMEDOUT)
  }

  /// Ends it with SIGTERM and checks that it exits cleanly (status 0).
  func stop() async throws {
    kill(process.processIdentifier, SIGTERM)
    try #require(await process.exited(within: .seconds(90)), "SIGTERM ends it")
    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 0)
  }
}
