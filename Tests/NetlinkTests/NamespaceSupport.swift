import CourierDomain
import CourierNetlink
import CourierTestSupport
import Foundation
import Synchronization

let isRoot = getuid() == 0

struct CommandFailed: Error, CustomStringConvertible {
  var command: String
  var status: Int32
  var output: String
  var description: String { "`\(command)` exited \(status): \(output)" }
}

/// Runs `ip` with arguments and returns its output; throws when it fails.
@discardableResult
func ip(_ arguments: [String]) throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let output = String(decoding: data, as: UTF8.self)
  guard process.terminationStatus == 0 else {
    throw CommandFailed(
      command: "ip " + arguments.joined(separator: " "), status: process.terminationStatus,
      output: output)
  }
  return output
}

private let namespaceCounter = Atomic<Int>(0)

/// Two network namespaces joined by a veth pair: `va` in the monitor's namespace, `vb` (up,
/// 10.77.0.2/24) in the peer's. Removed by `remove()`.
final class VethPair: Sendable {
  let monitorNamespace: String
  let peerNamespace: String

  init() throws {
    let number = namespaceCounter.add(1, ordering: .relaxed).newValue
    monitorNamespace = "cnl-\(getpid())-\(number)-a"
    peerNamespace = "cnl-\(getpid())-\(number)-b"
    do {
      try ip(["netns", "add", monitorNamespace])
      try ip(["netns", "add", peerNamespace])
      try ip([
        "-n", monitorNamespace, "link", "add", "va", "type", "veth", "peer", "name", "vb",
        "netns", peerNamespace,
      ])
      try ip(["-n", peerNamespace, "addr", "add", "10.77.0.2/24", "dev", "vb"])
      try ip(["-n", peerNamespace, "link", "set", "vb", "up"])
    } catch {
      remove()
      throw error
    }
  }

  var path: String { "/var/run/netns/\(monitorNamespace)" }

  /// Runs `ip -n <monitor namespace> …`.
  @discardableResult
  func here(_ arguments: String...) throws -> String {
    try ip(["-n", monitorNamespace] + arguments)
  }

  /// Runs `ip -n <peer namespace> …`.
  @discardableResult
  func peer(_ arguments: String...) throws -> String { try ip(["-n", peerNamespace] + arguments) }

  /// Brings `va` up with 10.77.0.1/24 and a default route via the peer.
  func connect() throws {
    try here("addr", "add", "10.77.0.1/24", "dev", "va")
    try here("link", "set", "va", "up")
    try here("route", "add", "default", "via", "10.77.0.2", "dev", "va")
  }

  func remove() {
    _ = try? ip(["netns", "del", monitorNamespace])
    _ = try? ip(["netns", "del", peerNamespace])
  }
}

struct TimedOut: Error, CustomStringConvertible {
  var waitingFor: String
  var last: NetworkPath
  var description: String {
    "timed out waiting for \(waitingFor); last path: \(PathReport.details(last))"
  }
}

/// Awaits the monitor's stream until a path matches, failing after `limit` with the last path
/// in full (interfaces, addresses, routes) to show why.
@discardableResult
func awaitPath(
  _ monitor: NetlinkPathMonitor, _ what: String, within limit: Duration = .seconds(30),
  where predicate: @escaping @Sendable (NetworkPath) -> Bool
) async throws -> NetworkPath {
  do {
    return try await PathLog(monitor.updates()).wait(what, within: limit, where: predicate)
  } catch is PathWaitTimedOut {
    throw TimedOut(waitingFor: what, last: monitor.currentPath)
  }
}

extension NetworkPath {
  func interface(_ name: String) -> NetworkInterface? { interfaces.first { $0.name == name } }
}

/// Runs a monitor inside a fresh veth pair's namespace for the body, then stops it and removes
/// the namespaces.
func withMonitor(
  receiveBufferSize: Int? = nil,
  _ body: (NetlinkPathMonitor, VethPair) async throws -> Void
) async throws {
  let pair = try VethPair()
  defer { pair.remove() }
  let monitor = NetlinkPathMonitor(
    options: .init(namespacePath: pair.path, receiveBufferSize: receiveBufferSize))
  let run = Task { try await monitor.run() }
  defer { run.cancel() }
  try await body(monitor, pair)
  run.cancel()
  try await run.value
}
