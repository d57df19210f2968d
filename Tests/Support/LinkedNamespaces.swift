import Foundation
import Synchronization

/// Two network namespaces made for one test, a server's and a client's, joined by a veth
/// pair: `vs` (10.213.0.1/24) in the server's, `vc` (10.213.0.2/24, default route via the
/// server) in the client's, loopback up in both. A real link whose rate (`tc tbf`), carrier and
/// routes the test changes, with the bytes that reach the server counted by iptables in the
/// server's namespace. Removed by `remove()` (and by `deinit`). Root only.
public final class LinkedNamespaces: Sendable {
  /// The server's namespace.
  public let server: String
  /// The client's namespace.
  public let client: String
  /// The server's address on the link.
  public let serverAddress = "10.213.0.1"
  /// The client's address on the link.
  public let clientAddress = "10.213.0.2"

  private static let counter = Atomic<Int>(0)

  /// A command that failed, with what it printed.
  public struct Failure: Error, CustomStringConvertible {
    /// The command line.
    public var command: String
    /// Its exit status.
    public var status: Int32
    /// Its standard output and error.
    public var output: String
    /// The command, its status and its output.
    public var description: String { "`\(command)` exited \(status): \(output)" }
  }

  /// Creates the namespaces and the link (no rate limit yet).
  /// - Parameter tag: a few letters naming the test (namespace names carry it and the pid).
  /// - Throws: `Failure` when a command fails (what was made is removed).
  public init(tag: String) async throws {
    let number = Self.counter.add(1, ordering: .relaxed).newValue
    server = "c\(tag)-\(getpid())-\(number)-s"
    client = "c\(tag)-\(getpid())-\(number)-c"
    do {
      for command in [
        ["ip", "netns", "add", server],
        ["ip", "netns", "add", client],
        [
          "ip", "-n", server, "link", "add", "vs", "type", "veth", "peer", "name", "vc", "netns",
          client,
        ],
        ["ip", "-n", server, "addr", "add", "\(serverAddress)/24", "dev", "vs"],
        ["ip", "-n", client, "addr", "add", "\(clientAddress)/24", "dev", "vc"],
        ["ip", "-n", server, "link", "set", "lo", "up"],
        ["ip", "-n", client, "link", "set", "lo", "up"],
        ["ip", "-n", server, "link", "set", "vs", "up"],
        ["ip", "-n", client, "link", "set", "vc", "up"],
        ["ip", "-n", client, "route", "add", "default", "via", serverAddress, "dev", "vc"],
      ] {
        try await Self.check(command)
      }
    } catch {
      remove()
      throw error
    }
  }

  deinit { remove() }

  /// Removes both namespaces (and so the link, the qdiscs and the rules).
  public func remove() {
    for name in [server, client] {
      _ = try? Self.runBlocking(["ip", "netns", "del", name])
    }
  }

  /// Limits the client's sending rate on the link with `tc tbf` (and the server's, so ACKs do
  /// not bunch up behind a burst).
  /// - Parameter rate: a `tc` rate, e.g. `100mbit`.
  /// - Throws: `Failure`.
  public func limitRate(_ rate: String) async throws {
    for (namespace, device) in [(client, "vc"), (server, "vs")] {
      try await Self.check([
        "ip", "netns", "exec", namespace, "tc", "qdisc", "replace", "dev", device, "root", "tbf",
        "rate", rate, "burst", "256kb", "latency", "100ms",
      ])
    }
  }

  /// Counts, from now on, the bytes of every packet that reaches the server on the link for
  /// `port` (iptables `INPUT` in the server's namespace; IP headers included). The rule has no
  /// target: it counts and decides nothing, and it goes first, so the packets a
  /// ``stall(afterBytes:toPort:)`` drops are counted too (they crossed the link).
  /// - Parameter port: the server's TCP port.
  /// - Throws: `Failure`.
  public func countBytes(toPort port: Int) async throws {
    try await Self.check(
      inServer + [
        "iptables", "-I", "INPUT", "1", "-i", "vs", "-p", "tcp", "--dport", String(port), "-m",
        "comment", "--comment", Self.countComment,
      ])
  }

  /// The bytes counted by ``countBytes(toPort:)`` so far.
  /// - Returns: the counter of the rule.
  /// - Throws: `Failure` when the counter cannot be read.
  public func countedBytes() async throws -> Int {
    let output = try await Self.check(inServer + ["iptables", "-nvx", "-L", "INPUT"])
    // "    pkts      bytes target     prot opt in     out     source               destination"
    for line in output.split(separator: "\n") where line.contains("/* \(Self.countComment) */") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if fields.count > 1, let bytes = Int(fields[1]) { return bytes }
    }
    throw Failure(command: "iptables -nvx -L INPUT", status: 0, output: output)
  }

  /// Lets `bytes` more bytes (IP headers included) reach the server's `port` from now on, then
  /// drops every further packet to it: the transfer stalls at a point set in bytes, not in
  /// time, so a test can act mid-transfer (kill the client, cut the link) however slow the
  /// machine is, instead of racing a poll against the transfer. Replaces an earlier stall.
  /// - Parameters:
  ///   - bytes: how many bytes still pass (iptables `quota`).
  ///   - port: the server's TCP port.
  /// - Throws: `Failure`.
  public func stall(afterBytes bytes: Int, toPort port: Int) async throws {
    let chain = Self.stallChain
    if try await Self.run(inServer + ["iptables", "-n", "-L", chain]).status != 0 {
      try await Self.check(inServer + ["iptables", "-N", chain])
      try await Self.check(
        inServer + [
          "iptables", "-A", "INPUT", "-i", "vs", "-p", "tcp", "--dport", String(port), "-j", chain,
        ])
    } else {
      try await Self.check(inServer + ["iptables", "-F", chain])
    }
    try await Self.check(
      inServer + [
        "iptables", "-A", chain, "-m", "quota", "--quota", String(max(1, bytes)), "-j", "RETURN",
      ])
    try await Self.check(inServer + ["iptables", "-A", chain, "-j", "DROP"])
  }

  /// Whether the stall set by ``stall(afterBytes:toPort:)`` has begun: its quota is spent and
  /// a packet was dropped.
  /// - Returns: true once a packet was dropped.
  /// - Throws: `Failure` when there is no stall or its counter cannot be read.
  public func isStalled() async throws -> Bool {
    let output = try await Self.check(inServer + ["iptables", "-nvx", "-L", Self.stallChain])
    for line in output.split(separator: "\n") where line.contains("DROP") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if let packets = fields.first.flatMap({ Int($0) }) { return packets > 0 }
    }
    throw Failure(command: "iptables -nvx -L \(Self.stallChain)", status: 0, output: output)
  }

  /// Ends a stall: every packet passes again (the stalled connection's retransmissions too).
  /// - Throws: `Failure`.
  public func unstall() async throws {
    try await Self.check(inServer + ["iptables", "-F", Self.stallChain])
  }

  static let countComment = "courier-count"
  static let stallChain = "courier-stall"

  /// Takes the server's end of the link down or up: the client loses (or gets back) its
  /// carrier, and its path monitor sees the path go (or come back); routes stay.
  /// - Parameter up: true for up.
  /// - Throws: `Failure`.
  public func setServerLink(up: Bool) async throws {
    try await Self.check(["ip", "-n", server, "link", "set", "vs", up ? "up" : "down"])
  }

  /// Takes the client's address off the link, and with it every route it had (no route at all:
  /// an offline machine), or puts both back.
  /// - Parameter present: true to put the address and the default route back.
  /// - Throws: `Failure`.
  public func setClientAddress(present: Bool) async throws {
    try await Self.check([
      "ip", "-n", client, "addr", present ? "add" : "del", "\(clientAddress)/24", "dev", "vc",
    ])
    if present {
      try await Self.check([
        "ip", "-n", client, "route", "replace", "default", "via", serverAddress, "dev", "vc",
      ])
    }
  }

  /// `ip netns exec <server> …` as a command prefix.
  public var inServer: [String] { ["ip", "netns", "exec", server] }
  /// `ip netns exec <client> …` as a command prefix.
  public var inClient: [String] { ["ip", "netns", "exec", client] }

  /// Runs a command to its end off the concurrency pool.
  /// - Parameters:
  ///   - arguments: the command and its arguments (found on PATH by `env`).
  ///   - environment: its environment (a sane PATH when empty).
  /// - Returns: its status, standard output and standard error.
  /// - Throws: when it cannot be started.
  public static func run(_ arguments: [String], environment: [String: String] = [:]) async throws
    -> (status: Int32, out: String, err: String)
  {
    try await offPool { try runBlocking(arguments, environment: environment) }
  }

  /// Runs a command and throws `Failure` (with its output) unless it exits 0.
  /// - Parameter arguments: the command.
  /// - Returns: its standard output.
  /// - Throws: `Failure`.
  @discardableResult
  public static func check(_ arguments: [String]) async throws -> String {
    let (status, out, err) = try await run(arguments)
    guard status == 0 else {
      throw Failure(command: arguments.joined(separator: " "), status: status, output: out + err)
    }
    return out
  }

  /// Runs a command to its end in the calling thread, both pipes drained.
  static func runBlocking(_ arguments: [String], environment: [String: String] = [:]) throws
    -> (status: Int32, out: String, err: String)
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.environment =
      environment.isEmpty ? ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"] : environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    try process.run()
    let errData = Mutex<Data>(Data())
    let reader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
    reader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1000) }
    return (
      process.terminationStatus, String(decoding: outData, as: UTF8.self),
      String(decoding: errData.withLock { $0 }, as: UTF8.self)
    )
  }
}
