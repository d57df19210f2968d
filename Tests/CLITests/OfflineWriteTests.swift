import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// `courier articles add` in a network namespace with no usable path (loopback only): the
/// write is saved and the command ends without trying the network; with a route to the same
/// (absent) server, it tries. A namespace created and removed here.
@Suite("An offline write does not try the network", .serialized)
struct OfflineWriteTests {
  static var root: Bool { getuid() == 0 }

  /// Runs a command to the end off the concurrency pool (`ChildProcess`: a blocked pool
  /// thread would starve the other suites running beside this one): its status, output and
  /// error.
  static func run(_ arguments: [String], environment: [String: String]) async throws -> (
    Int32, String, String
  ) {
    let result = try await ChildProcess.run(arguments, environment: environment)
    return (result.status, result.stdout, result.stderr)
  }

  @Test(
    "no route: saved at once, no request; with a route: the request is tried", .enabled(if: root))
  func offlineWrite() async throws {
    let binary = try InProcessCLI.builtCourier()
    let namespace = "coffline-\(getpid())"
    let dir = try InProcessCLI.temporaryDirectory("courier-off")
    defer {
      ChildProcess.runBlocking(["ip", "netns", "del", namespace])
      try? FileManager.default.removeItem(at: dir)
    }
    let (added, _, addError) = try await Self.run(
      ["ip", "netns", "add", namespace], environment: [:])
    try #require(added == 0, "ip netns add: \(addError)")
    // The routed server is on a link of the test's own, not loopback: plain http is allowed to
    // it, so that a route is what decides whether the write is tried.
    let environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
      "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "COURIER_TOKEN": "t", "COURIER_MAX_ATTEMPTS": "1",
      "COURIER_ALLOW_INSECURE_HTTP": "1",
    ]
    // A server on this machine with the loopback link down (a new namespace's is): not tried.
    let local = [
      "ip", "netns", "exec", namespace, binary.path, "--base-url", "http://127.0.0.1:9",
      "--data-dir", dir.appendingPathComponent("local").path, "--verbose",
    ]
    let down = try await Self.run(
      local + ["articles", "add", "--title", "lo down"], environment: environment)
    #expect(down.0 == 0, "\(down.1)\(down.2)")
    #expect(!down.2.contains("→ PUT"), "a request was tried with loopback down: \(down.2)")
    let (up, _, upError) = try await Self.run(
      ["ip", "-n", namespace, "link", "set", "lo", "up"], environment: [:])
    try #require(up == 0, "lo up: \(upError)")
    let tried = try await Self.run(
      local + ["articles", "add", "--title", "lo up"], environment: environment)
    #expect(tried.2.contains("→ PUT"), "not tried with loopback up: \(tried.2)")

    let courier = [
      "ip", "netns", "exec", namespace, binary.path, "--base-url", "http://10.80.0.2:8080",
      "--data-dir", dir.appendingPathComponent("data").path, "--verbose",
    ]
    let (status, out, err) = try await Self.run(
      courier + ["articles", "add", "--title", "offline"], environment: environment)
    #expect(status == 0, "\(out)\(err)")
    #expect(out.contains("Added article"), "\(out)")
    #expect(out.contains("Not sent yet"), "\(out)")
    #expect(!err.contains("→ PUT"), "a request was tried: \(err)")
    #expect(out.contains("1 write(s) pending."), "\(out)")
    // The same as JSON: the record as saved and the store's count, with nothing sent.
    let json = try await Self.run(
      courier + ["--json", "articles", "add", "--title", "offline json"], environment: environment)
    #expect(json.0 == 0, "\(json.1)\(json.2)")
    let reply = try #require(
      try JSONSerialization.jsonObject(with: Data(json.1.utf8)) as? [String: Any], "\(json.1)")
    #expect(reply["status"] as? String == "ok", "\(json.1)")
    #expect(reply["pending"] as? Int == 2, "\(json.1)")
    #expect(reply["sent"] as? Int == 0, "\(json.1)")
    #expect(reply["state"] as? String == "created", "\(json.1)")
    #expect(reply["queue"] as? String == "appended", "\(json.1)")
    #expect((reply["not_sent"] as? [String: Any])?["kind"] as? String == "offline", "\(json.1)")
    let (_, outbox, _) = try await Self.run(courier + ["outbox"], environment: environment)
    #expect(outbox.contains("2 pending"), "\(outbox)")

    // A route to the server (a veth whose peer has no address: nothing answers): now the
    // write is tried.
    for command in [
      ["ip", "-n", namespace, "link", "add", "va", "type", "veth", "peer", "name", "vb"],
      ["ip", "-n", namespace, "addr", "add", "10.80.0.1/24", "dev", "va"],
      ["ip", "-n", namespace, "link", "set", "va", "up"],
      ["ip", "-n", namespace, "link", "set", "vb", "up"],
      ["ip", "-n", namespace, "route", "add", "default", "via", "10.80.0.2", "dev", "va"],
    ] {
      let (status, _, err) = try await Self.run(command, environment: [:])
      try #require(status == 0, "\(command.joined(separator: " ")): \(err)")
    }
    let routed = try await Self.run(
      courier + ["--timeout", "1", "articles", "add", "--title", "routed"],
      environment: environment)
    #expect(routed.2.contains("→ PUT"), "the write was not tried with a route: \(routed.2)")
  }
}
