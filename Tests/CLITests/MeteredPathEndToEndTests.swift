import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// Issue 26's end-to-end test, over D-Bus: NetworkManager's `Metered` from python-dbusmock on a
/// private bus (nm_mock.py), the built `courier` in a network namespace joined by a veth link to
/// the reference backend in another (the bytes reaching the server counted by iptables). A
/// 5 MiB queued upload waits while the primary connection is metered (no attempt, no upload
/// byte at the server) while an `articles add` is sent at once; NetworkManager says unmetered
/// and the watching `courier sync --watch` sends it, once, byte for byte. A download a person
/// runs on the metered path goes at once, with a note (decision 2604).
@Suite(
  "The path policy end to end, the metered fact from NetworkManager", .serialized,
  .enabled(if: getuid() == 0, "network namespaces need root"))
struct MeteredPathEndToEndTests {
  /// Polls `condition` every 50 ms until it holds or 60 s pass.
  func until(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
      guard ContinuousClock.now < deadline else {
        Issue.record("timed out waiting for \(what)")
        return
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  static func sha256(_ file: URL) async throws -> String {
    let out = try await LinkedNamespaces.check(["sha256sum", file.path])
    return String(out.prefix(64))
  }

  static func object(_ text: String) -> [String: Any] {
    let line = text.split(separator: "\n").last.map(String.init) ?? ""
    return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
  }

  @Test(
    "a 5 MiB queued upload waits on a metered path and goes when it turns unmetered, while an articles add is sent at once"
  )
  func meteredUpload() async throws {
    let mock = try await MockNetworkManager()
    defer { mock.stop() }
    try await mock.send("primary Phone gsm wwan0")
    try await mock.send("metered 1")
    let net = try await LinkedNamespaces(tag: "mu")
    defer { net.remove() }
    let backend = try await NamespacedBackend(in: net)
    defer { backend.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-metered")
    defer { CLIFixture.remove(dir) }
    let global = [
      "--base-url", backend.url.absoluteString, "--data-dir", dir.path, "--allow-insecure-http",
    ]
    let environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
      "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": mock.address,
    ]
    let courier = net.inClient + [try InProcessCLI.builtCourier().path] + global
    func run(_ arguments: [String], input: String? = nil) async throws -> ChildProcess.Result {
      try await ChildProcess.run(courier + arguments, input: input, environment: environment)
    }
    let login = try await run(
      ["login", "--username", "alice", "--password-stdin"], input: "secret\n")
    try #require(login.succeeded, "\(login)")
    let status = try await run(["status", "--no-probe"])
    try #require(status.stdout.contains("expensive: yes (from NetworkManager)"), "\(status)")

    // An image of noise (the server takes images only), sent as it is: over 5 MiB.
    let big = dir.appendingPathComponent("big.png")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "1800x1800", "xc:gray", "+noise", "Random", big.path])
    let size = try #require(
      try FileManager.default.attributesOfItem(atPath: big.path)[.size] as? Int)
    try #require(size >= 5 << 20, "a 5 MiB upload")
    let digest = try await Self.sha256(big)
    try await net.countBytes(toPort: backend.port)

    let queued = try await run(["upload", big.path, "--queue", "--no-compress", "--title", "big"])
    try #require(queued.succeeded, "\(queued)")
    // The article is sent at once (the add's own pass), on the metered path.
    let added = try await run(["articles", "add", "--title", "sent at once", "--json"])
    #expect(added.succeeded, "\(added)")
    let articleID = try #require(Self.object(added.stdout)["id"] as? String, "\(added)")
    // A one-shot sync holds it too, and says so.
    let sync = try await run(["sync", "--json"])
    #expect(sync.succeeded, "\(sync)")
    let report = Self.object(sync.stdout)
    #expect(report["waiting_for_sender"] as? Int == 1 && report["sent"] as? Int == 0, "\(sync)")

    func entries() async throws -> [[String: Any]] {
      let outbox = try await run(["outbox", "--json"])
      return Self.object(outbox.stdout)["entries"] as? [[String: Any]] ?? []
    }
    func writes() async throws -> [String] {
      let log = try await backend.json("GET", "/__log") as? [[String: Any]] ?? []
      return log.compactMap { entry in
        guard let method = entry["method"] as? String, let path = entry["path"] as? String,
          method != "GET", method != "HEAD", !path.hasPrefix("/auth")
        else { return nil }
        return "\(method) \(path)"
      }
    }
    func heldUnsent() async throws {
      let waiting = try await entries()
      #expect(waiting.count == 1, "\(waiting)")
      let upload = try #require(waiting.first)
      #expect(
        upload["collection"] as? String == "uploads" && upload["state"] as? String == "pending")
      #expect(upload["attempts"] as? Int == 0, "never handed to the network: \(upload)")
      #expect(upload["waits_on"] as? String == "expensive", "\(upload)")
      let sent = try await writes()
      #expect(sent.allSatisfy { !$0.contains("/photos") && !$0.contains("/uploads") }, "\(sent)")
      let photos = try await backend.photos()
      let uploads = try await backend.uploads()
      #expect(photos.isEmpty && uploads.isEmpty, "\(photos) \(uploads)")
      // Logins, the article and the probe's GETs: far from the 5 MiB the upload would be.
      #expect(try await net.countedBytes() < 512 << 10)
    }
    try await heldUnsent()
    #expect(try await writes().contains("PUT /articles/\(articleID)"), "the article went at once")

    // A watching courier (it holds the data folder's sync lock once it prints): an article
    // added now is its to send, and the pass that sends it holds the upload too.
    let watch = try WatchedCourier(
      global + ["sync", "--watch", "--json"], in: net.client, environment: environment)
    _ = try await watch.next(containing: #""pending":1"#)
    let during = try await run(["articles", "add", "--title", "while watching", "--json"])
    #expect(during.succeeded, "\(during)")
    let duringID = try #require(Self.object(during.stdout)["id"] as? String, "\(during)")
    try await until("the watch to send the article") {
      guard try await writes().contains("PUT /articles/\(duringID)") else { return false }
      return try await entries().count == 1
    }
    try await heldUnsent()

    // NetworkManager says unmetered: the change alone sends it, once, byte for byte.
    try await mock.send("metered 2")
    try await until("the upload to be delivered") { try await entries().isEmpty }
    let photos = try await backend.photos()
    #expect(photos.count == 1, "delivered exactly once: \(photos)")
    #expect(photos.first?["sha256"] as? String == digest)
    #expect(photos.first?["size"] as? Int == size)
    try await watch.stop()

    // A download the person runs is never held: on the metered path it goes at once, noted.
    try await mock.send("metered 1")
    let photo = try #require(photos.first?["id"] as? String)
    let copy = dir.appendingPathComponent("copy.png")
    let download = try await run(["download", "/photos/\(photo)", "--output", copy.path])
    #expect(download.succeeded, "\(download)")
    #expect(download.stderr.contains("courier: note: on a metered network: "), "\(download)")
    #expect(try await Self.sha256(copy) == digest)
  }
}
