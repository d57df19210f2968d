import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `courier status` and `courier watch` as a person runs them: the built binary, inside a
/// network namespace the test makes, with a veth pair the test brings up and down.
@Suite("courier status and watch in a network namespace", .serialized)
struct PathCommandsTests {
  static var courier: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("courier")
  }

  @discardableResult
  static func sh(_ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// A namespace with a veth pair whose peer stays in the root namespace.
  struct Namespace {
    let name = "cwatch\(getpid() % 100_000)"
    var inside: String { "vc\(getpid() % 100_000)a" }
    var outside: String { "vc\(getpid() % 100_000)b" }

    func create() throws {
      try sh(["ip", "netns", "add", name])
      try sh(["ip", "link", "add", inside, "type", "veth", "peer", "name", outside])
      try sh(["ip", "link", "set", inside, "netns", name])
      try sh(["ip", "link", "set", outside, "up"])
      try sh(["ip", "-n", name, "addr", "add", "10.213.7.2/24", "dev", inside])
      try sh(["ip", "-n", name, "link", "set", inside, "up"])
      try sh(["ip", "-n", name, "route", "add", "default", "via", "10.213.7.1", "dev", inside])
    }

    func destroy() {
      _ = try? sh(["ip", "link", "del", outside])
      _ = try? sh(["ip", "netns", "del", name])
    }
  }

  @Test("status says satisfied with a default route and why; unsatisfied once the link is down")
  func status() throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let namespace = Namespace()
    namespace.destroy()
    try namespace.create()
    defer { namespace.destroy() }
    let up = try run(["ip", "netns", "exec", namespace.name, Self.courier.path, "status", "--json"])
    #expect(up.contains(#""status":"satisfied""#), "\(up)")
    #expect(up.contains(#""name":"\#(namespace.inside)""#))
    #expect(up.contains("10.213.7.2/24"))
    try Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "down"])
    let down = try run(["ip", "netns", "exec", namespace.name, Self.courier.path, "status"])
    #expect(down.hasPrefix("status: unsatisfied"), "\(down)")
  }

  @Test("watch prints each change with its generation and ends cleanly on SIGTERM")
  func watch() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let namespace = Namespace()
    namespace.destroy()
    try namespace.create()
    defer { namespace.destroy() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "ip", "netns", "exec", namespace.name, Self.courier.path, "watch", "--json",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    var output = lines(of: pipe.fileHandleForReading).makeAsyncIterator()
    // The process is killed at the end, or by this watchdog if it never prints what is awaited.
    let watchdog = Task {
      try await Task.sleep(for: .seconds(90))
      kill(process.processIdentifier, SIGKILL)
    }
    defer { watchdog.cancel() }
    func next(containing text: String) async throws -> String {
      while let line = await output.next() {
        if line.contains(text) { return line }
      }
      throw POSIXError(.ETIMEDOUT)
    }
    _ = try await next(containing: #""status":"satisfied""#)
    try Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "down"])
    let down = try await next(containing: #""status":"unsatisfied""#)
    #expect(down.contains(#""generation":1"#))
    try Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "up"])
    try Self.sh(["ip", "-n", namespace.name, "route", "replace", "default", "via", "10.213.7.1"])
    _ = try await next(containing: #""status":"satisfied""#)
    // `ip netns exec` execs the command, so the pid is courier's own.
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 0)
  }

  func run(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }
}

/// Lines from a pipe, read on a plain thread (never blocking the concurrency pool).
func lines(of handle: FileHandle) -> AsyncStream<String> {
  let (stream, continuation) = AsyncStream<String>.makeStream()
  Thread {
    var buffer = Data()
    while true {
      let chunk = handle.availableData
      if chunk.isEmpty { break }
      buffer.append(chunk)
      while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
        buffer.removeSubrange(buffer.startIndex...newline)
      }
    }
    continuation.finish()
  }.start()
  return stream
}
