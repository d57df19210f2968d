import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// Courier's captive-portal probe over a monitor (decision 2612), with scripted answers.
@Suite("PortalProbingMonitor", .timeLimit(.minutes(1)))
struct PortalProbingMonitorTests {
  static let health = URL(string: "http://server.test/health") ?? URL(fileURLWithPath: "/")
  static let api = URL(string: "http://portal.test/captive") ?? URL(fileURLWithPath: "/")

  static func redirect(_ transport: InMemoryTransport) {
    transport.enqueue(
      status: .found, json: "<html>sign in</html>",
      headerFields: [.location: "http://login.test/", .contentType: "text/html"])
  }

  @Test("a usable path is checked: a portal is published, re-checked, and the path comes back")
  func follows() async throws {
    let transport = InMemoryTransport()
    Self.redirect(transport)
    Self.redirect(transport)
    transport.enqueue(status: .ok, json: #"{"ok": true}"#)
    let inner = ManualPathMonitor()
    let monitor = PortalProbingMonitor(
      monitor: inner, probe: PortalProbe(transport: { transport }, url: Self.health),
      clock: ContinuousClock(), recheck: .milliseconds(300))
    let running = Task { try await monitor.run() }
    defer { running.cancel() }
    var seen: [PathStatus] = []
    var sent = false
    for await path in monitor.updates() {
      seen.append(path.status)
      if !sent, await sendWhenRunning(inner) { sent = true }
      if transport.requests.count >= 3, path.status == .satisfied { break }
    }
    #expect(seen.contains(.captivePortal))
    #expect(monitor.currentPath.status == .satisfied)
    // Two redirects, then the server's answer: three checks, all to the probe URL.
    #expect(transport.requests.count == 3)
    #expect(transport.requests.allSatisfy { $0.path == "/health" && $0.method == .get })
  }

  /// Sends `satisfied` once the monitor follows the inner one (it subscribed at its run).
  func sendWhenRunning(_ inner: ManualPathMonitor) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(30)
    while inner.subscriberCount < 1, ContinuousClock.now < deadline {
      await Task.yield()
    }
    return inner.send(.satisfied)
  }

  @Test("recheck() after a reply that is not the server's: 511 is a portal, 204 is open")
  func recheck() async {
    let transport = InMemoryTransport()
    let inner = ManualPathMonitor()
    inner.send(.satisfied, expensive: true)
    let monitor = PortalProbingMonitor(
      monitor: inner, probe: PortalProbe(transport: { transport }, url: Self.health),
      clock: ContinuousClock(), recheck: .seconds(30))
    transport.enqueue(status: .networkAuthenticationRequired, json: "")
    #expect(await monitor.recheck() == .portal(userPortalURL: nil))
    #expect(monitor.currentPath.status == .captivePortal)
    #expect(monitor.currentPath.isExpensive)
    transport.enqueue(status: .noContent, json: "")
    #expect(await monitor.recheck() == .open)
    #expect(monitor.currentPath.status == .satisfied)
    // No answer at all concludes nothing: the path stays as it was.
    transport.enqueue(failure: CourierError(.offline))
    #expect(await monitor.recheck() == .unknown)
    #expect(monitor.currentPath.status == .satisfied)
  }

  @Test("RFC 8908's API decides first when it answers; the probe URL is not asked")
  func captiveAPI() async {
    let transport = InMemoryTransport()
    transport.enqueue(
      status: .ok, json: #"{"captive": true, "user-portal-url": "https://login.test/"}"#,
      headerFields: [.contentType: "application/captive+json"])
    let probe = PortalProbe(transport: { transport }, url: Self.health, captiveAPI: Self.api)
    #expect(await probe.check() == .portal(userPortalURL: "https://login.test/"))
    #expect(transport.requests.map(\.path) == ["/captive"])
    #expect(transport.requests.first?.headerFields[.accept] == "application/captive+json")
    // An answer that says nothing (404) falls back to the probe URL.
    transport.enqueue(status: .notFound)
    transport.enqueue(status: .ok, json: #"{"ok": true}"#)
    #expect(await probe.check() == .open)
    #expect(transport.requests.map(\.path) == ["/captive", "/captive", "/health"])
  }

  @Test(
    "the API a DHCP lease advertised is asked when the configuration names none, only over https (decision 2606)"
  )
  func advertisedAPI() async {
    func path(advertising url: String) -> NetworkPath {
      var path = NetworkPath.unknown
      path.sources.os = OSPathFacts(
        service: .networkManager,
        captivePortalAPI: .init(url: url, option: "default_url"))
      return path
    }
    let lease = path(advertising: "https://portal.test/lease-api")
    let advertised = PortalProbe.advertised(on: lease)
    #expect(advertised?.absoluteString == "https://portal.test/lease-api")
    #expect(PortalProbe.advertised(on: path(advertising: "http://portal.test/api")) == nil)
    #expect(PortalProbe.advertised(on: path(advertising: "not a url")) == nil)
    #expect(PortalProbe.advertised(on: .unknown) == nil)
    let transport = InMemoryTransport()
    let captive = #"{"captive": true, "user-portal-url": "https://login.test/"}"#
    transport.enqueue(
      status: .ok, json: captive, headerFields: [.contentType: "application/captive+json"])
    let probe = PortalProbe(transport: { transport }, url: Self.health)
    #expect(
      await probe.check(advertised: advertised) == .portal(userPortalURL: "https://login.test/"))
    #expect(transport.requests.map(\.path) == ["/lease-api"])
    // A configured API wins over the network's.
    transport.enqueue(
      status: .ok, json: #"{"captive": false}"#,
      headerFields: [.contentType: "application/captive+json"])
    let configured = PortalProbe(transport: { transport }, url: Self.health, captiveAPI: Self.api)
    #expect(await configured.check(advertised: advertised) == .open)
    #expect(transport.requests.map(\.path) == ["/lease-api", "/captive"])
  }
}

/// A download the path policy holds back stops after its `HEAD`, before any body (decision
/// 2610): `courier download` asks the policy with the size the `HEAD` announced.
@Suite("Downloader and the path policy")
struct DownloaderPathPolicyTests {
  struct Held: Error {}

  @Test("admit is told the size from the HEAD; when it throws, no GET is sent, no file made")
  func heldAfterTheHead() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-downloader-policy-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(
      .response(
        HTTPResponse(status: .ok, headerFields: [.contentLength: String(5 << 20), .eTag: "\"v\""])
      ))
    let downloader = Downloader(
      transport: transport, options: TransportOptions(),
      stateDirectory: dir.appendingPathComponent("state"), hasher: SwiftFileHasher())
    let target = dir.appendingPathComponent("out/big")
    let told = Mutex<Int64?>(nil)
    let policy = PathPolicy.standard
    let metered = NetworkPath(status: .satisfied, isExpensive: true)
    await #expect(throws: Held.self) {
      try await downloader.download(
        URL(string: "https://api.example.com/big") ?? dir, to: target,
        admit: { bytes in
          told.withLock { $0 = bytes }
          if policy.wait(for: .downloads, bytes: bytes, on: metered) != nil { throw Held() }
        })
    }
    #expect(told.withLock { $0 } == 5 << 20)
    #expect(transport.requests.map(\.method) == [.head])
    #expect(!FileManager.default.fileExists(atPath: target.path))
  }
}
