import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// A captive portal on a real link (issue 26, decision 2612): the reference backend in one
/// network namespace, the built `courier` in another, and between them a portal that answers
/// EVERY request with 302 to a login page (`portal-server.py`, the server's port redirected to
/// it by iptables, as a hotel's gateway does). Courier's probe finds it, the path says
/// `captivePortal`, the write waits (the backend receives none) and `courier outbox` says why;
/// when the portal opens (the redirect removed), the watching courier's next check finds the
/// server and sends the write.
@Suite(
  "A captive portal across a link", .serialized,
  .enabled(if: getuid() == 0, "network namespaces need root"))
struct CaptivePortalNetworkTests {
  @Test("writes wait behind a portal, the backend receives none, and they go once it opens")
  func portal() async throws {
    let net = try await LinkedNamespaces(tag: "cp")
    defer { net.remove() }
    let backend = try await NamespacedBackend(in: net)
    defer { backend.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-portal")
    defer { CLIFixture.remove(dir) }
    let binary = try InProcessCLI.builtCourier()
    let environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
      "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "COURIER_PORTAL_RECHECK_SECONDS": "1",
    ]
    let courier =
      net.inClient + [
        binary.path, "--base-url", backend.url.absoluteString, "--data-dir", dir.path,
        "--allow-insecure-http",
      ]
    func run(_ arguments: [String], input: String? = nil) async throws -> ChildProcess.Result {
      try await ChildProcess.run(courier + arguments, input: input, environment: environment)
    }
    let login = try await run(
      ["login", "--username", "alice", "--password-stdin"], input: "secret\n")
    try #require(login.succeeded, "\(login)")

    // The portal: every connection to the server's port goes to it instead.
    let portalPort = 10_000 + (backend.port + 1) % 5_000
    let script = ReferenceBackend.repositoryRoot.appendingPathComponent(
      "Tests/Support/portal-server.py")
    let portal = Process()
    portal.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    portal.arguments = net.inServer + ["python3", script.path, String(portalPort)]
    try portal.run()
    defer {
      // SIGKILL: the test process's children inherit its blocked SIGTERM.
      kill(portal.processIdentifier, SIGKILL)
      portal.waitUntilExit()
    }
    let redirect = [
      "PREROUTING", "-i", "vs", "-p", "tcp", "--dport", String(backend.port), "-j", "REDIRECT",
      "--to-ports", String(portalPort),
    ]
    try await LinkedNamespaces.check(net.inServer + ["iptables", "-t", "nat", "-A"] + redirect)
    // Up when it answers the client's side of the link.
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      let probe = try await LinkedNamespaces.run(
        net.inClient + [
          "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "\(backend.url)/health",
        ])
      if probe.out.hasPrefix("302") { break }
      try await Task.sleep(for: .milliseconds(100))
    }

    // The write is kept: the portal's answer proves nothing.
    _ = try await run(["articles", "add", "--title", "behind the portal"])
    let outbox = try await run(["outbox", "--json"])
    #expect(outbox.succeeded, "\(outbox)")
    let listed = try JSONSerialization.jsonObject(with: Data(outbox.stdout.utf8)) as? [String: Any]
    let entries = listed?["entries"] as? [[String: Any]] ?? []
    #expect(entries.count == 1 && entries.first?["state"] as? String == "pending", "\(outbox)")
    #expect(entries.first?["waits"] as? String == "path", "\(outbox)")
    #expect(entries.first?["waits_on"] as? String == "captive_portal", "\(outbox)")
    let text = try await run(["outbox"])
    #expect(text.stdout.contains("waiting for the Wi-Fi login page to be passed"), "\(text)")

    // A watching courier: the path says captivePortal, and nothing reaches the backend.
    let watchOutput = dir.appendingPathComponent("watch.jsonl")
    _ = FileManager.default.createFile(atPath: watchOutput.path, contents: nil)
    let watch = Process()
    watch.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    watch.arguments = courier + ["sync", "--watch", "--json"]
    watch.environment = environment
    watch.standardOutput = try FileHandle(forWritingTo: watchOutput)
    watch.standardError = FileHandle.nullDevice
    try watch.run()
    defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
    func watchSaw(_ needle: String) async throws -> Bool {
      let deadline = ContinuousClock.now + .seconds(60)
      while ContinuousClock.now < deadline {
        let text = (try? String(contentsOf: watchOutput, encoding: .utf8)) ?? ""
        if text.contains(needle) { return true }
        try await Task.sleep(for: .milliseconds(50))
      }
      return false
    }
    #expect(try await watchSaw(#""path":"captivePortal""#), "the watch saw the portal")
    let articles = { () async throws -> [String] in
      let log = try await backend.json("GET", "/__log") as? [[String: Any]] ?? []
      return log.compactMap { entry in
        guard entry["method"] as? String == "PUT",
          let path = entry["path"] as? String, path.hasPrefix("/articles/")
        else { return nil }
        return path
      }
    }
    #expect(try await articles().isEmpty, "the backend received no write behind the portal")

    // The portal opens: the next check finds the server, the path is satisfied, the write goes.
    try await LinkedNamespaces.check(net.inServer + ["iptables", "-t", "nat", "-D"] + redirect)
    #expect(try await watchSaw(#""path":"satisfied""#), "the watch saw the portal open")
    let sentBy = ContinuousClock.now + .seconds(60)
    while try await articles().isEmpty, ContinuousClock.now < sentBy {
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(try await articles().count == 1, "the write went once the portal opened")
    kill(watch.processIdentifier, SIGTERM)
    #expect(await watch.exited(within: .seconds(60)))
    let after = try await run(["outbox", "--json"])
    #expect(after.stdout.contains(#""entries":[]"#), "\(after)")
  }
}
