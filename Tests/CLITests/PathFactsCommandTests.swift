import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `courier watch --json` and `courier status` reading NetworkManager over a private D-Bus
/// (python-dbusmock's template, driven by Tests/Support/nm_mock.py): the built binary, in a
/// network namespace with a default route so netlink says satisfied (decisions 2600, 2601).
@Suite("courier path facts from NetworkManager over D-Bus", .serialized)
struct PathFactsCommandTests {
  /// The mock and its bus, driven one command at a time.
  final class MockNetworkManager {
    let process = Process()
    let input = Pipe()
    var replies: AsyncStream<String>.Iterator
    let address: String

    init() async throws {
      let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Support/nm_mock.py")
      process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
      process.arguments = [script.path]
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      try process.run()
      replies = lines(of: output.fileHandleForReading).makeAsyncIterator()
      let first = await replies.next() ?? ""
      try #require(first.hasPrefix("address "), "nm_mock.py said “\(first)”")
      address = String(first.dropFirst("address ".count))
    }

    /// Sends a command and waits until the change is on the bus.
    func send(_ command: String) async throws {
      input.fileHandleForWriting.write(Data((command + "\n").utf8))
      let reply = await replies.next()
      try #require(reply == "ok", "\(command): \(reply ?? "no reply")")
    }

    func stop() {
      try? input.fileHandleForWriting.close()
      process.waitUntilExit()
    }
  }

  static func environment(bus: String, _ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
    environment.removeValue(forKey: "COURIER_PATH_FACTS")
    environment.removeValue(forKey: "COURIER_CONSTRAINED_INTERFACES")
    return environment.merging(extra) { $1 }
  }

  @Test("each change of Metered, Connectivity and PrimaryConnection reaches watch --json")
  func watch() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    let namespace = PathCommandsTests.Namespace(tag: "f")
    namespace.destroy()
    try await namespace.create()
    defer { namespace.destroy() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "ip", "netns", "exec", namespace.name, PathCommandsTests.courier.path, "watch", "--json",
    ]
    process.environment = Self.environment(
      bus: mock.address, ["COURIER_CONSTRAINED_INTERFACES": "bluetooth"])
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    var output = lines(of: pipe.fileHandleForReading).makeAsyncIterator()
    let watchdog = Task {
      try await Task.sleep(for: .seconds(90))
      kill(process.processIdentifier, SIGKILL)
    }
    defer { watchdog.cancel() }
    func next(containing texts: String...) async throws -> String {
      while let line = await output.next() {
        if texts.allSatisfy(line.contains) { return line }
      }
      throw POSIXError(.ETIMEDOUT)
    }
    let nm = #""os":{"service":"NetworkManager""#
    _ = try await next(
      containing: #""status":"satisfied""#, nm + #","metered":"unknown","connectivity":"full""#,
      #""sources":{"status":"netlink","expensive":"netlink","constrained":"configuration"}"#)
    try await mock.send("metered 1")
    _ = try await next(
      containing: #""expensive":true"#, #""expensive":"NetworkManager""#, #""metered":"yes""#)
    try await mock.send("metered 4")
    _ = try await next(containing: #""expensive":false"#, #""metered":"guess-no""#)
    try await mock.send("metered 3")
    _ = try await next(containing: #""expensive":true"#, #""metered":"guess-yes""#)
    try await mock.send("connectivity 2")
    _ = try await next(
      containing: #""status":"captivePortal""#, #""sources":{"status":"NetworkManager""#)
    try await mock.send("connectivity 4")
    _ = try await next(containing: #""status":"satisfied""#, #""connectivity":"full""#)
    try await mock.send("primary Phone bluetooth bnep0")
    _ = try await next(
      containing: #""constrained":true"#,
      #""primary":{"id":"Phone","type":"bluetooth","interface":"bnep0"}"#)
    // NetworkManager stops: its facts go back to netlink's; it restarts: they come back.
    try await mock.send("kill")
    _ = try await next(
      containing: #""os":{"service":"none"}"#, #""expensive":false"#,
      #""expensive":"netlink""#)
    try await mock.send("start")
    _ = try await next(containing: nm + #","metered":"unknown""#)
    try await mock.send("metered 1")
    let back = try await next(containing: #""expensive":true"#)
    #expect(back.contains(#""generation":1"#), "one netlink run throughout: \(back)")
    // The bus itself goes away: "unknown from the OS"; it comes back: Courier reconnects.
    try await mock.send("killbus")
    _ = try await next(
      containing: #""os":{"service":"no-bus","why":"the system bus closed the connection"}"#,
      #""expensive":false"#)
    try await mock.send("startbus")
    _ = try await next(containing: nm + #","metered":"unknown""#)
    kill(process.processIdentifier, SIGTERM)
    try #require(await process.exited(within: .seconds(90)), "SIGTERM ends the watch")
    #expect(process.terminationStatus == 0)
  }

  @Test("status names the service and each fact's source, and says when there is no bus")
  func status() async throws {
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    try await mock.send("metered 3")
    try await mock.send("primary Hotel 802-11-wireless wlan0")
    let courier = PathCommandsTests.courier.path
    let withBus = try await ChildProcess.run(
      [courier, "status"], environment: Self.environment(bus: mock.address))
    #expect(withBus.stdout.contains("expensive: yes (from NetworkManager)"), "\(withBus)")
    #expect(
      withBus.stdout.contains(
        "NetworkManager: connectivity full, metered guess-yes, primary connection “Hotel” "
          + "(802-11-wireless on wlan0)"), "\(withBus)")
    let noBus = try await ChildProcess.run(
      [courier, "status"],
      environment: Self.environment(bus: "unix:path=/nonexistent/courier-test-bus"))
    #expect(
      noBus.stdout.contains("no system D-Bus: metered and portal states come from netlink alone"),
      "\(noBus)")
    #expect(noBus.succeeded, "Courier goes on with netlink: \(noBus)")
    let off = try await ChildProcess.run(
      [courier, "status", "--json"],
      environment: Self.environment(bus: mock.address, ["COURIER_PATH_FACTS": "none"]))
    #expect(off.stdout.contains(#""os":{"service":"off"}"#), "\(off)")
    // Without NetworkManager, systemd-networkd answers (auto), and says no more than it knows.
    try await mock.send("kill")
    try await mock.send("networkd online routable")
    let networkd = try await ChildProcess.run(
      [courier, "status", "--json"], environment: Self.environment(bus: mock.address))
    #expect(
      networkd.stdout.contains(
        #""os":{"service":"networkd","online_state":"online","operational_state":"routable"}"#),
      "\(networkd)")
    #expect(networkd.stdout.contains(#""expensive":"netlink""#), "\(networkd)")
    let nobody = try await ChildProcess.run(
      [courier, "status", "--json"],
      environment: Self.environment(bus: mock.address, ["COURIER_PATH_FACTS": "networkmanager"]))
    #expect(nobody.stdout.contains(#""os":{"service":"none"}"#), "\(nobody)")
    let bad = try await ChildProcess.run(
      [courier, "status"],
      environment: Self.environment(bus: mock.address, ["COURIER_PATH_FACTS": "dbus"]))
    #expect(!bad.succeeded)
    #expect(bad.stderr.contains("COURIER_PATH_FACTS"), "\(bad)")
  }

  @Test(
    "a command that needs no facts never loads libsystemd (--version, an offline add); status does")
  func lazyLoading() async throws {
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    let courier = PathCommandsTests.courier.path
    let environment = Self.environment(bus: mock.address, ["LD_DEBUG": "files"])
    let version = try await ChildProcess.run([courier, "--version"], environment: environment)
    #expect(version.succeeded, "\(version)")
    #expect(!version.stderr.contains("libsystemd.so.0"), "--version mapped libsystemd")
    let status = try await ChildProcess.run([courier, "status"], environment: environment)
    #expect(status.stderr.contains("file=libsystemd.so.0"), "status loads it: \(status.stdout)")
    // An offline write asks netlink alone whether to try the server (linkMonitor).
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let namespace = "pfoff\(getpid() % 100_000)"
    ChildProcess.runBlocking(["ip", "netns", "del", namespace])
    try #require(try await ChildProcess.run(["ip", "netns", "add", namespace]).succeeded)
    defer { ChildProcess.runBlocking(["ip", "netns", "del", namespace]) }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pf-\(UUID())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let offline = try await ChildProcess.run(
      [
        "ip", "netns", "exec", namespace, courier, "articles", "add", "--title", "T", "--body",
        "B",
      ],
      environment: environment.merging([
        "COURIER_DATA_DIR": folder.path, "COURIER_TOKEN": "abc",
        "COURIER_BASE_URL": "https://example.invalid",
      ]) { $1 })
    #expect(offline.stdout.contains("offline"), "\(offline)")
    #expect(!offline.stderr.contains("libsystemd.so.0"), "an offline add mapped libsystemd")
  }
}
