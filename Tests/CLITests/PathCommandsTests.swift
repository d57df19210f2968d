import CourierTestSupport
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

  /// Runs a command to its end off the pool; a failure says how it ended and what it printed.
  @discardableResult
  static func sh(_ arguments: [String]) async throws -> ChildProcess.Result {
    try await ChildProcess.run(arguments)
  }

  /// A namespace with a veth pair whose peer stays in the root namespace.
  struct Namespace {
    /// Tells one suite's namespace and links from another's in the same process.
    var tag = "c"
    var name: String { "\(tag)watch\(getpid() % 100_000)" }
    var inside: String { "v\(tag)\(getpid() % 100_000)a" }
    var outside: String { "v\(tag)\(getpid() % 100_000)b" }

    func create() async throws {
      for command in [
        ["ip", "netns", "add", name],
        ["ip", "link", "add", inside, "type", "veth", "peer", "name", outside],
        ["ip", "link", "set", inside, "netns", name], ["ip", "link", "set", outside, "up"],
        ["ip", "-n", name, "addr", "add", "10.213.7.2/24", "dev", inside],
        ["ip", "-n", name, "link", "set", inside, "up"],
        ["ip", "-n", name, "route", "add", "default", "via", "10.213.7.1", "dev", inside],
      ] {
        let result = try await sh(command)
        try #require(result.succeeded, "\(command.joined(separator: " ")): \(result)")
      }
    }

    func destroy() {
      ChildProcess.runBlocking(["ip", "link", "del", outside])
      ChildProcess.runBlocking(["ip", "netns", "del", name])
    }
  }

  @Test("status says satisfied with a default route and why; unsatisfied once the link is down")
  func status() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let namespace = Namespace()
    namespace.destroy()
    try await namespace.create()
    defer { namespace.destroy() }
    let upRun = try await Self.sh([
      "ip", "netns", "exec", namespace.name, Self.courier.path, "status", "--json",
    ])
    let up = upRun.stdout
    #expect(up.contains(#""status":"satisfied""#), "\(upRun)")
    #expect(up.contains(#""name":"\#(namespace.inside)""#))
    #expect(up.contains("10.213.7.2/24"))
    try await Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "down"])
    let downRun = try await Self.sh([
      "ip", "netns", "exec", namespace.name, Self.courier.path, "status",
    ])
    #expect(downRun.stdout.hasPrefix("status: unsatisfied"), "\(downRun)")
  }

  @Test("watch prints each change with its generation and ends cleanly on SIGTERM")
  func watch() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let namespace = Namespace()
    namespace.destroy()
    try await namespace.create()
    defer { namespace.destroy() }
    let watch = try WatchedCourier(["watch", "--json"], in: namespace.name)
    _ = try await watch.next(containing: #""status":"satisfied""#)
    try await Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "down"])
    let down = try await watch.next(containing: #""status":"unsatisfied""#)
    #expect(down.contains(#""generation":1"#))
    try await Self.sh(["ip", "-n", namespace.name, "link", "set", namespace.inside, "up"])
    try await Self.sh([
      "ip", "-n", namespace.name, "route", "replace", "default", "via", "10.213.7.1",
    ])
    _ = try await watch.next(containing: #""status":"satisfied""#)
    try await watch.stop()
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
