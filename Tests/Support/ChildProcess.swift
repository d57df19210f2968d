import Foundation

/// Runs a program to its end for a test, the way every test should: on a thread of its own
/// (never one of the concurrency pool's two, see `offPool`), its standard output and error in
/// files (no pipe can fill up and stall it), and a crash's backtrace kept in its standard error
/// (`SWIFT_BACKTRACE`), so that a failure message says what happened.
public enum ChildProcess {
  /// How a program ended and what it printed.
  public struct Result: Sendable, CustomStringConvertible {
    /// The exit status, or the number of the signal that ended it.
    public var status: Int32
    /// Whether a signal ended it (`status` is then the signal's number).
    public var signaled: Bool
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String

    /// Whether it exited with status 0.
    public var succeeded: Bool { status == 0 && !signaled }

    /// The ending and the end of both outputs, for a failure message.
    public var description: String {
      (signaled ? "killed by signal \(status)" : "exit \(status)")
        + "; stdout: \(stdout.suffix(2_000)); stderr: \(stderr.suffix(4_000))"
    }
  }

  /// Runs a program to its end.
  /// - Parameters:
  ///   - arguments: the program (looked up on PATH through `/usr/bin/env`) and its arguments.
  ///   - input: what to write on its standard input (then closed); /dev/null when nil.
  ///   - environment: its environment; the test process's own when nil.
  /// - Returns: how it ended and what it printed.
  /// - Throws: when it cannot be started.
  public static func run(
    _ arguments: [String], input: String? = nil, environment: [String: String]? = nil
  ) async throws -> Result {
    try await offPool {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = arguments
      var environment = environment ?? ProcessInfo.processInfo.environment
      environment["SWIFT_BACKTRACE"] = environment["SWIFT_BACKTRACE"] ?? "enable=yes,interactive=no"
      process.environment = environment
      let folder = FileManager.default.temporaryDirectory
      let outFile = folder.appendingPathComponent("courier-child-\(UUID()).out")
      let errFile = folder.appendingPathComponent("courier-child-\(UUID()).err")
      for file in [outFile, errFile] {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
      }
      defer {
        for file in [outFile, errFile] { try? FileManager.default.removeItem(at: file) }
      }
      let out = try FileHandle(forWritingTo: outFile)
      let err = try FileHandle(forWritingTo: errFile)
      defer {
        try? out.close()
        try? err.close()
      }
      process.standardOutput = out
      process.standardError = err
      let stdin = Pipe()
      if input != nil {
        process.standardInput = stdin
      } else {
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
      }
      try process.run()
      if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
      }
      process.waitUntilExit()
      return Result(
        status: process.terminationStatus,
        signaled: process.terminationReason == .uncaughtSignal,
        stdout: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "")
    }
  }

  /// Runs a program to its end from synchronous code (a `defer`): for quick commands only, as
  /// it holds the calling thread meanwhile.
  /// - Parameter arguments: the program and its arguments.
  /// - Returns: its exit status, or nil when it could not be started.
  @discardableResult
  public static func runBlocking(_ arguments: [String]) -> Int32? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    guard (try? process.run()) != nil else { return nil }
    process.waitUntilExit()
    return process.terminationStatus
  }
}
