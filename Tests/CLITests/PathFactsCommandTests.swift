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
  @Test("each change of Metered, Connectivity and PrimaryConnection reaches watch --json")
  func watch() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    let namespace = PathCommandsTests.Namespace(tag: "f")
    namespace.destroy()
    try await namespace.create()
    defer { namespace.destroy() }
    let watch = try WatchedCourier(
      ["watch", "--json"], in: namespace.name,
      environment: MockNetworkManager.environment(
        bus: mock.address, ["COURIER_CONSTRAINED_INTERFACES": "bluetooth"]))
    let nm = #""os":{"service":"NetworkManager""#
    _ = try await watch.next(
      containing: #""status":"satisfied""#, nm + #","metered":"unknown","connectivity":"full""#,
      #""sources":{"status":"netlink","expensive":"netlink","constrained":"configuration"}"#)
    try await mock.send("metered 1")
    _ = try await watch.next(
      containing: #""expensive":true"#, #""expensive":"NetworkManager""#, #""metered":"yes""#)
    try await mock.send("metered 4")
    _ = try await watch.next(containing: #""expensive":false"#, #""metered":"guess-no""#)
    try await mock.send("metered 3")
    _ = try await watch.next(containing: #""expensive":true"#, #""metered":"guess-yes""#)
    try await mock.send("connectivity 2")
    _ = try await watch.next(
      containing: #""status":"captivePortal""#, #""sources":{"status":"NetworkManager""#)
    try await mock.send("connectivity 4")
    _ = try await watch.next(containing: #""status":"satisfied""#, #""connectivity":"full""#)
    try await mock.send("primary Phone bluetooth bnep0")
    _ = try await watch.next(
      containing: #""constrained":true"#,
      #""primary":{"id":"Phone","type":"bluetooth","interface":"bnep0"}"#)
    // A lease naming a captive-portal API: a change of the active connection, not the manager.
    try await mock.send("dhcp4 default_url https://portal.test/api")
    _ = try await watch.next(
      containing: #""captive_portal_api":{"url":"https://portal.test/api","option":"default_url"}"#
    )
    // NetworkManager stops: its facts go back to netlink's; it restarts: they come back.
    try await mock.send("kill")
    _ = try await watch.next(
      containing: #""os":{"service":"none"}"#, #""expensive":false"#,
      #""expensive":"netlink""#)
    try await mock.send("start")
    _ = try await watch.next(containing: nm + #","metered":"unknown""#)
    try await mock.send("metered 1")
    let back = try await watch.next(containing: #""expensive":true"#)
    #expect(back.contains(#""generation":1"#), "one netlink run throughout: \(back)")
    // The bus itself goes away: "unknown from the OS"; it comes back: Courier reconnects.
    try await mock.send("killbus")
    _ = try await watch.next(
      containing: #""os":{"service":"no-bus","why":"the system bus closed the connection"}"#,
      #""expensive":false"#)
    try await mock.send("startbus")
    _ = try await watch.next(containing: nm + #","metered":"unknown""#)
    try await watch.stop()
  }

  @Test("status names the service and each fact's source, and says when there is no bus")
  func status() async throws {
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    try await mock.send("metered 3")
    try await mock.send("primary Hotel 802-11-wireless wlan0")
    let courier = PathCommandsTests.courier.path
    let withBus = try await ChildProcess.run(
      [courier, "status"], environment: MockNetworkManager.environment(bus: mock.address))
    #expect(withBus.stdout.contains("expensive: yes (from NetworkManager)"), "\(withBus)")
    #expect(
      withBus.stdout.contains(
        "NetworkManager: connectivity full, metered guess-yes, primary connection “Hotel” "
          + "(802-11-wireless on wlan0)"), "\(withBus)")
    let noBus = try await ChildProcess.run(
      [courier, "status"],
      environment: MockNetworkManager.environment(bus: "unix:path=/nonexistent/courier-test-bus"))
    #expect(
      noBus.stdout.contains("no system D-Bus: metered and portal states come from netlink alone"),
      "\(noBus)")
    #expect(noBus.succeeded, "Courier goes on with netlink: \(noBus)")
    let off = try await ChildProcess.run(
      [courier, "status", "--json"],
      environment: MockNetworkManager.environment(bus: mock.address, ["COURIER_PATH_FACTS": "none"])
    )
    #expect(off.stdout.contains(#""os":{"service":"off"}"#), "\(off)")
    // Without NetworkManager, systemd-networkd answers (auto), and says no more than it knows.
    try await mock.send("kill")
    try await mock.send("networkd online routable")
    let networkd = try await ChildProcess.run(
      [courier, "status", "--json"], environment: MockNetworkManager.environment(bus: mock.address))
    #expect(
      networkd.stdout.contains(
        #""os":{"service":"networkd","online_state":"online","operational_state":"routable"}"#),
      "\(networkd)")
    #expect(networkd.stdout.contains(#""expensive":"netlink""#), "\(networkd)")
    let nobody = try await ChildProcess.run(
      [courier, "status", "--json"],
      environment: MockNetworkManager.environment(
        bus: mock.address, ["COURIER_PATH_FACTS": "networkmanager"]))
    #expect(nobody.stdout.contains(#""os":{"service":"none"}"#), "\(nobody)")
    let bad = try await ChildProcess.run(
      [courier, "status"],
      environment: MockNetworkManager.environment(bus: mock.address, ["COURIER_PATH_FACTS": "dbus"])
    )
    #expect(!bad.succeeded)
    #expect(bad.stderr.contains("COURIER_PATH_FACTS"), "\(bad)")
  }

  @Test(
    "status asks the portal probe once, says captivePortal from it, and names the captive-portal API a DHCP lease advertised"
  )
  func statusProbes() async throws {
    try #require(getuid() == 0, "network namespaces need root (CI runs as root)")
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    try await mock.send("primary Hotel 802-11-wireless wlan0")
    try await mock.send("dhcp4 default_url https://127.0.0.1:9/captive-api")
    let namespace = PathCommandsTests.Namespace(tag: "q")
    namespace.destroy()
    try await namespace.create()
    defer { namespace.destroy() }
    try await PathCommandsTests.sh(["ip", "-n", namespace.name, "link", "set", "lo", "up"])
    // A portal on the namespace's loopback, answering every request with 302 to its login page.
    let port = 18_000 + Int(getpid() % 1000)
    let portal = Process()
    portal.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    portal.arguments = [
      "ip", "netns", "exec", namespace.name, "python3",
      ReferenceBackend.repositoryRoot.appendingPathComponent("Tests/Support/portal-server.py").path,
      String(port),
    ]
    try portal.run()
    defer {
      kill(portal.processIdentifier, SIGKILL)
      portal.waitUntilExit()
    }
    let inside = ["ip", "netns", "exec", namespace.name]
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      let answer = try await ChildProcess.run(
        inside + [
          "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health",
        ])
      if answer.stdout.hasPrefix("302") { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    let environment = MockNetworkManager.environment(bus: mock.address)
    let courier =
      inside + [PathCommandsTests.courier.path, "--base-url", "http://127.0.0.1:\(port)"]
    let text = try await ChildProcess.run(courier + ["status"], environment: environment)
    #expect(text.succeeded, "\(text)")
    #expect(text.stdout.hasPrefix("status: captivePortal (generation"), "\(text)")
    #expect(text.stdout.contains(", from probe)"), "\(text)")
    #expect(
      text.stdout.contains(
        "portal probe: a captive portal answers in the server's place (its login page: "
          + "http://login.portal.invalid/login)"), "\(text)")
    #expect(
      text.stdout.contains(
        "its DHCPv4 lease names a captive-portal API: https://127.0.0.1:9/captive-api "
          + "(DHCPv4 option 114 (default_url))"), "\(text)")
    #expect(
      text.stdout.contains(
        "captive-portal API (RFC 8908): https://127.0.0.1:9/captive-api (advertised by the network: "
          + "DHCPv4 option 114 (default_url), via NetworkManager)"), "\(text)")
    let json = try await ChildProcess.run(courier + ["status", "--json"], environment: environment)
    #expect(json.stdout.contains(#""status":"captivePortal""#), "\(json)")
    #expect(json.stdout.contains(#""verdict":"captive_portal""#), "\(json)")
    #expect(
      json.stdout.contains(
        #""captive_portal_api":{"url":"https://127.0.0.1:9/captive-api","option":"default_url"}"#),
      "\(json)")
    // --no-probe asks nothing: the path is what netlink and NetworkManager say.
    let skipped = try await ChildProcess.run(
      courier + ["status", "--no-probe"], environment: environment)
    #expect(skipped.stdout.hasPrefix("status: satisfied"), "\(skipped)")
    #expect(skipped.stdout.contains("portal probe: not run (--no-probe)"), "\(skipped)")
    // A lease naming a plain-http API: shown, never asked (RFC 8908: https only).
    try await mock.send("dhcp4 default_url http://127.0.0.1:9/captive-api")
    let plain = try await ChildProcess.run(
      courier + ["status", "--no-probe"], environment: environment)
    #expect(
      plain.stdout.contains("not asked: RFC 8908 has it reached over https only"), "\(plain)")
  }

  @Test(
    "a command that needs no facts never loads libsystemd (--version, an offline add); status does")
  func lazyLoading() async throws {
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    let courier = PathCommandsTests.courier.path
    let environment = MockNetworkManager.environment(bus: mock.address, ["LD_DEBUG": "files"])
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
