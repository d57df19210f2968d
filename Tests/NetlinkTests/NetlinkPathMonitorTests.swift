import CNetlink
import CourierDomain
import Foundation
import Synchronization
import Testing

@testable import CourierNetlink

/// The monitor against the real kernel, inside network namespaces each test creates and
/// removes. Every wait is on the monitor's stream, bounded in time.
@Suite(
  "NetlinkPathMonitor (real netlink, root)", .serialized, .enabled(if: isRoot),
  .timeLimit(.minutes(1)))
struct NetlinkPathMonitorTests {
  @Test("a veth brought up and down; the kernel's silent route removal is seen")
  func linkUpDown() async throws {
    try await withMonitor { monitor, pair in
      let start = try await awaitPath(monitor, "va seen, down") {
        $0.status == .unsatisfied && $0.interface("va")?.isUsable == false
      }
      #expect(start.interface("va")?.kind == "ethernet")
      try pair.connect()
      let up = try await awaitPath(monitor, "satisfied") { $0.status == .satisfied }
      #expect(
        up.interface("va")
          == NetworkInterface(
            name: "va", kind: "ethernet", isUsable: true, addresses: ["10.77.0.1/24"],
            hasDefaultRoute: true))
      try pair.here("link", "set", "va", "down")
      let down = try await awaitPath(monitor, "unsatisfied") { $0.status == .unsatisfied }
      #expect(down.interface("va")?.isUsable == false)
      #expect(down.interface("va")?.hasDefaultRoute == false)
      // The kernel deleted the default route without RTM_DELROUTE: after the link comes back
      // the path must stay unsatisfied until a route is added again.
      try pair.here("link", "set", "va", "up")
      let back = try await awaitPath(monitor, "va usable again") {
        $0.interface("va")?.isUsable == true
      }
      #expect(back.status == .unsatisfied)
      #expect(back.interface("va")?.hasDefaultRoute == false)
      try pair.here("route", "add", "default", "via", "10.77.0.2")
      try await awaitPath(monitor, "satisfied after the route") { $0.status == .satisfied }
    }
  }

  @Test("an address added and removed")
  func addressAddRemove() async throws {
    try await withMonitor { monitor, pair in
      try pair.here("link", "set", "va", "up")
      try pair.here("route", "add", "default", "dev", "va")
      let noAddress = try await awaitPath(monitor, "va up with a route") {
        $0.interface("va")?.hasDefaultRoute == true
      }
      #expect(noAddress.status == .unsatisfied)
      #expect(noAddress.interface("va")?.addresses == [])
      try pair.here("addr", "add", "10.77.0.1/24", "dev", "va")
      let added = try await awaitPath(monitor, "satisfied") { $0.status == .satisfied }
      #expect(added.interface("va")?.addresses == ["10.77.0.1/24"])
      try pair.here("addr", "del", "10.77.0.1/24", "dev", "va")
      let removed = try await awaitPath(monitor, "unsatisfied") { $0.status == .unsatisfied }
      #expect(removed.interface("va")?.addresses == [])
      // A gateway route dies with its address, silently.
      try pair.here("addr", "add", "10.77.0.1/24", "dev", "va")
      try pair.here("route", "replace", "default", "via", "10.77.0.2")
      try await awaitPath(monitor, "satisfied via a gateway") { $0.status == .satisfied }
      try pair.here("route", "del", "default", "dev", "va")
      try pair.here("route", "add", "default", "via", "10.77.0.2")
      try pair.here("addr", "del", "10.77.0.1/24", "dev", "va")
      let gone = try await awaitPath(monitor, "route gone with the address") {
        $0.interface("va")?.addresses == [] && $0.interface("va")?.hasDefaultRoute == false
      }
      #expect(gone.status == .unsatisfied)
    }
  }

  @Test("a default route added and removed, in the main table and a policy table")
  func defaultRoute() async throws {
    try await withMonitor { monitor, pair in
      try pair.here("addr", "add", "10.77.0.1/24", "dev", "va")
      try pair.here("link", "set", "va", "up")
      let noRoute = try await awaitPath(monitor, "va usable") {
        $0.interface("va")?.addresses == ["10.77.0.1/24"] && $0.interface("va")?.isUsable == true
      }
      #expect(noRoute.status == .unsatisfied)
      try pair.here("route", "add", "default", "via", "10.77.0.2")
      try await awaitPath(monitor, "satisfied") { $0.status == .satisfied }
      try pair.here("route", "del", "default")
      let deleted = try await awaitPath(monitor, "unsatisfied") { $0.status == .unsatisfied }
      #expect(deleted.interface("va")?.hasDefaultRoute == false)
      // WireGuard-style policy routing keeps the default route out of the main table.
      try pair.here("route", "add", "default", "via", "10.77.0.2", "table", "51820")
      try await awaitPath(monitor, "satisfied by table 51820") { $0.status == .satisfied }
      try pair.here("route", "del", "default", "table", "51820")
      try await awaitPath(monitor, "unsatisfied again") { $0.status == .unsatisfied }
    }
  }

  @Test("carrier lost on the peer side: routes stay, flagged linkdown, and do not count")
  func carrierLost() async throws {
    try await withMonitor { monitor, pair in
      try pair.connect()
      try await awaitPath(monitor, "satisfied") { $0.status == .satisfied }
      try pair.peer("link", "set", "vb", "down")
      let lost = try await awaitPath(monitor, "unsatisfied") { $0.status == .unsatisfied }
      #expect(lost.interface("va")?.isUsable == false)
      #expect(lost.interface("va")?.hasDefaultRoute == false)
      #expect(try pair.here("route", "show", "default").contains("linkdown"))
      try pair.peer("link", "set", "vb", "up")
      let back = try await awaitPath(monitor, "satisfied again") { $0.status == .satisfied }
      #expect(back.interface("va")?.hasDefaultRoute == true)
    }
  }

  @Test("an overrun against a small receive buffer ends in the right state, new generation")
  func overrun() async throws {
    try await withMonitor(receiveBufferSize: 1) { monitor, pair in
      try pair.connect()
      let before = try await awaitPath(monitor, "satisfied") { $0.status == .satisfied }
      let batch = FileManager.default.temporaryDirectory
        .appendingPathComponent("cnl-flood-\(getpid())-\(pair.monitorNamespace).txt")
      defer { try? FileManager.default.removeItem(at: batch) }
      let addresses = (0..<1000).map { "10.78.\($0 / 250).\($0 % 250 + 1)/32" }
      let keep = "10.78.3.250/32"
      var lines = addresses.map { "addr add \($0) dev va" }
      lines += addresses.filter { $0 != keep }.map { "addr del \($0) dev va" }
      try lines.joined(separator: "\n").write(to: batch, atomically: true, encoding: .utf8)
      try ip(["-n", pair.monitorNamespace, "-batch", batch.path])
      let after = try await awaitPath(monitor, "only \(keep) left") {
        $0.interface("va")?.addresses == ["10.77.0.1/24", keep]
      }
      #expect(after.status == .satisfied)
      let statistics = monitor.statistics
      #expect(statistics.receiveBufferSize < 10_000)
      #expect(statistics.resynchronisations >= 1, "\(statistics)")
      #expect(monitor.generation > before.generation)
    }
  }

  @Test("restarting while old events are pending lets none of them through")
  func restart() async throws {
    let pair = try VethPair()
    defer { pair.remove() }
    try pair.connect()
    let monitor = NetlinkPathMonitor(options: .init(namespacePath: pair.path, receiveBufferSize: 1))
    let seen = Mutex<[UInt64]>([])
    let observer = Task {
      for await path in monitor.updates() { seen.withLock { $0.append(path.generation) } }
    }
    defer { observer.cancel() }
    let first = Task { try await monitor.run() }
    let ready = try await awaitPath(monitor, "first run satisfied") { $0.status == .satisfied }
    // A flood in flight while the first run is cancelled and the second starts.
    let flood = Process()
    flood.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    let batch = FileManager.default.temporaryDirectory
      .appendingPathComponent("cnl-restart-\(getpid()).txt")
    defer { try? FileManager.default.removeItem(at: batch) }
    let lines = (0..<400).flatMap {
      ["addr add 10.79.1.\($0 % 250 + 1)/32 dev va", "addr del 10.79.1.\($0 % 250 + 1)/32 dev va"]
    }
    try lines.joined(separator: "\n").write(to: batch, atomically: true, encoding: .utf8)
    flood.arguments = ["-n", pair.monitorNamespace, "-batch", batch.path]
    try flood.run()
    first.cancel()
    try await first.value
    let second = Task { try await monitor.run() }
    defer { second.cancel() }
    let secondGeneration = try await awaitPath(monitor, "second run's first snapshot") {
      $0.generation > ready.generation && $0.status != .unknown
    }.generation
    flood.waitUntilExit()
    try pair.here("addr", "add", "10.79.2.1/32", "dev", "va")
    try await awaitPath(monitor, "the marker address") {
      $0.interface("va")?.addresses == ["10.77.0.1/24", "10.79.2.1/32"]
    }
    second.cancel()
    try await second.value
    let generations = seen.withLock { $0 }
    let firstOfSecond = try #require(generations.firstIndex { $0 >= secondGeneration })
    #expect(generations[firstOfSecond...].allSatisfy { $0 >= secondGeneration }, "\(generations)")
    #expect(generations == generations.sorted(), "generations only grow: \(generations)")
  }

  @Test("a second run() supersedes the first: its pending events are dropped and it stops")
  func supersededRun() async throws {
    let pair = try VethPair()
    defer { pair.remove() }
    try pair.connect()
    let monitor = NetlinkPathMonitor(options: .init(namespacePath: pair.path))
    let first = Task { try await monitor.run() }
    defer { first.cancel() }
    let old = try await awaitPath(monitor, "first run satisfied") { $0.status == .satisfied }
    let seen = Mutex<[NetworkPath]>([])
    let observer = Task {
      for await path in monitor.updates() { seen.withLock { $0.append(path) } }
    }
    defer { observer.cancel() }
    // Not cancelled: the first run's thread is still reading when the second one starts.
    let second = Task { try await monitor.run() }
    defer { second.cancel() }
    let fresh = try await awaitPath(monitor, "second run's snapshot") {
      $0.generation > old.generation && $0.status == .satisfied
    }
    // Both threads receive this change; only the current generation may publish it, and the
    // superseded run returns on its own when it sees it.
    try pair.here("route", "del", "default")
    let after = try await awaitPath(monitor, "unsatisfied") { $0.status == .unsatisfied }
    #expect(after.generation == fresh.generation)
    try await first.value
    #expect(
      seen.withLock {
        $0.allSatisfy { $0.generation <= old.generation || $0.generation >= fresh.generation }
      })
    #expect(
      seen.withLock {
        $0.filter { $0.status == .unsatisfied }.allSatisfy { $0.generation == fresh.generation }
      })
    second.cancel()
    try await second.value
  }

  @Test("snapshot() asks the system once, without run(): satisfied, then not after the route goes")
  func snapshotWithoutRun() async throws {
    let pair = try VethPair()
    defer { pair.remove() }
    try pair.connect()
    let monitor = NetlinkPathMonitor(options: .init(namespacePath: pair.path))
    #expect(await monitor.snapshot().status == .satisfied)
    try pair.here("route", "del", "default")
    #expect(await monitor.snapshot().status == .unsatisfied)
    // Nothing ran: the monitor itself heard nothing.
    #expect(monitor.currentPath.status == .unknown)
    #expect(monitor.statistics.fullDumps == 0)
  }

  /// Every open descriptor as "number -> target" (socket:[inode], anon_inode:[eventfd]...).
  static func descriptors() throws -> Set<String> {
    let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    return Set(
      names.compactMap { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))
          .map { "\(name) -> \($0)" }
      })
  }

  @Test("cancellation returns promptly and closes every descriptor it opened")
  func cancellationReleases() async throws {
    let pair = try VethPair()
    defer { pair.remove() }
    let before = try Self.descriptors()
    let monitor = NetlinkPathMonitor(options: .init(namespacePath: pair.path))
    let run = Task { try await monitor.run() }
    try await awaitPath(monitor, "first snapshot") { $0.status != .unknown }
    let opened = try Self.descriptors().subtracting(before)
    // Other suites open descriptors meanwhile: only the netlink sockets are surely the monitor's.
    let netlink = opened.filter { entry in
      guard entry.contains("socket:"), let fd = Int32(entry.prefix { $0 != " " }) else {
        return false
      }
      var domain: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 && domain == AF_NETLINK
    }
    #expect(netlink.count >= 2, "\(opened)")
    #expect(opened.contains { $0.contains("eventfd") }, "\(opened)")
    run.cancel()
    try await run.value
    let after = try Self.descriptors()
    #expect(netlink.isDisjoint(with: after), "\(netlink) still open")
  }

  @Test("a missing namespace or a failing thread hook stops run() with a clear error")
  func startFailures() async throws {
    let missing = NetlinkPathMonitor(options: .init(namespacePath: "/var/run/netns/cnl-missing"))
    await #expect {
      try await missing.run()
    } throws: { error in
      let error = error as? NetlinkMonitorError
      return error?.code == .namespace && error?.errno == ENOENT
        && error?.message.contains("cnl-missing") == true
    }
    struct HookFailed: Error {}
    let hooked = NetlinkPathMonitor(options: .init(prepareThread: { throw HookFailed() }))
    await #expect(throws: HookFailed.self) { try await hooked.run() }
  }

  @Test("messages sent by a process instead of the kernel are ignored")
  func foreignSender() async throws {
    try await withMonitor { monitor, pair in
      try await awaitPath(monitor, "va seen") { $0.interface("va") != nil }
      // A forged "eth9 up with an address and a default route", multicast from user space.
      let forged =
        NetlinkBytes.link(index: 99, name: "eth9", flags: NetlinkBytes.upRunning)
        + NetlinkBytes.address(index: 99, [10, 5, 0, 2], prefix: 24)
        + NetlinkBytes.defaultRoute(interface: 99, gateway: [10, 5, 0, 1])
      let path = pair.path
      let sent = try await withCheckedThrowingContinuation {
        (done: CheckedContinuation<Int32, any Error>) in
        let thread = Thread {
          guard courier_setns_net(path) == 0 else {
            done.resume(throwing: CommandFailed(command: "setns", status: 1, output: path))
            return
          }
          let fd = courier_nl_open(0, 0)
          let result = forged.withUnsafeBytes {
            courier_nl_send_to_groups(fd, RT.groups, $0.baseAddress, $0.count)
          }
          courier_close(fd)
          done.resume(returning: result)
        }
        thread.start()
      }
      #expect(sent == 0)
      // A real change after the forgery: once it shows, the forgery was processed before it.
      try pair.here("link", "set", "va", "up")
      let after = try await awaitPath(monitor, "va up") { $0.interface("va")?.isUsable == true }
      #expect(after.interface("eth9") == nil)
      #expect(after.status == .unsatisfied)
      #expect(monitor.statistics.foreignMessages >= 1)
    }
  }
}
