import CourierDomain
import Testing

@testable import CourierNetlink

private typealias B = NetlinkBytes

private let lo = B.link(
  index: 1, name: "lo", flags: B.upRunning | RT.iffLoopback, type: RT.arpLoopback)
private let eth0 = B.link(index: 2, name: "eth0", flags: B.upRunning)
private let v4 = B.address(index: 2, [10, 0, 0, 2], prefix: 24)
private let v6Global: [UInt8] = [0x20, 1, 0xd, 0xb8] + [UInt8](repeating: 0, count: 11) + [2]
private let route = B.defaultRoute(interface: 2)

@Suite("NetlinkTables")
struct NetlinkTablesTests {
  static func tables(_ datagrams: [[UInt8]]) throws -> NetlinkTables {
    var tables = NetlinkTables()
    for datagram in datagrams {
      for message in try NetlinkParser.parse(datagram) { _ = tables.apply(message) }
    }
    return tables
  }

  @Test(
    "the rule for satisfied",
    arguments: [
      ("link up, address, default route", [lo, eth0, v4, route], PathStatus.satisfied),
      (
        "only loopback", [lo, B.address(index: 1, [127, 0, 0, 1], prefix: 8, scope: 254)],
        .unsatisfied
      ),
      ("no default route", [eth0, v4], .unsatisfied),
      ("no address", [eth0, route], .unsatisfied),
      (
        "not running",
        [B.link(index: 2, name: "eth0", flags: RT.iffUp | RT.iffLowerUp), v4, route], .unsatisfied
      ),
      (
        "no carrier", [B.link(index: 2, name: "eth0", flags: RT.iffUp | RT.iffRunning), v4, route],
        .unsatisfied
      ),
      (
        "administratively down", [B.link(index: 2, name: "eth0", flags: 0), v4, route], .unsatisfied
      ),
      (
        "tentative address",
        [eth0, B.address(index: 2, [10, 0, 0, 2], prefix: 24, flags: RT.ifaTentative), route],
        .unsatisfied
      ),
      (
        "optimistic address",
        [eth0, B.address(index: 2, [10, 0, 0, 2], prefix: 24, flags: RT.ifaOptimistic), route],
        .unsatisfied
      ),
      (
        "DAD failed (only in the 32-bit flags)",
        [
          eth0, B.address(index: 2, v6Global, prefix: 64, flags: RT.ifaDadFailed),
          B.defaultRoute(
            family: RT.inet6, interface: 2,
            gateway: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]),
        ], .unsatisfied
      ),
      (
        "link-scope address only",
        [
          eth0,
          B.address(
            index: 2, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [5], prefix: 64, scope: 253),
          route,
        ], .unsatisfied
      ),
      (
        "route flagged linkdown",
        [eth0, v4, B.defaultRoute(interface: 2, flags: RT.nextHopLinkDown)], .unsatisfied
      ),
      (
        "route flagged dead", [eth0, v4, B.defaultRoute(interface: 2, flags: RT.nextHopDead)],
        .unsatisfied
      ),
      (
        "unreachable default route", [eth0, v4, B.defaultRoute(interface: 2, type: 7)], .unsatisfied
      ),
      (
        "default route through another link", [eth0, v4, B.defaultRoute(interface: 3)], .unsatisfied
      ),
      (
        "IPv6 default route but only an IPv4 address",
        [
          eth0, v4,
          B.defaultRoute(
            family: RT.inet6, interface: 2,
            gateway: [0xfe, 0x80] + [UInt8](repeating: 0, count: 14)),
        ], .unsatisfied
      ),
      (
        "IPv6 only",
        [
          eth0, B.address(index: 2, v6Global, prefix: 64),
          B.defaultRoute(
            family: RT.inet6, interface: 2,
            gateway: [0xfe, 0x80] + [UInt8](repeating: 0, count: 14)),
        ], .satisfied
      ),
      (
        "policy routing table (WireGuard)",
        [
          B.link(index: 5, name: "wg0", flags: B.upRunning, type: RT.arpNone, kind: "wireguard"),
          B.address(index: 5, [10, 9, 0, 2], prefix: 32),
          B.defaultRoute(interface: 5, table: 51820),
        ], .satisfied
      ),
      (
        "multipath with a live hop",
        [
          eth0, v4,
          B.defaultRoute(interface: 0, multipath: [(3, UInt8(RT.nextHopLinkDown)), (2, 0)]),
        ], .satisfied
      ),
      (
        "multipath whose hop here is linkdown",
        [
          eth0, v4,
          B.defaultRoute(interface: 0, multipath: [(2, UInt8(RT.nextHopLinkDown)), (3, 0)]),
        ], .unsatisfied
      ),
      (
        "route deleted", [eth0, v4, route, B.defaultRoute(interface: 2, delete: true)], .unsatisfied
      ),
      (
        "address deleted",
        [eth0, v4, route, B.address(index: 2, [10, 0, 0, 2], prefix: 24, delete: true)],
        .unsatisfied
      ),
      (
        "link deleted", [eth0, v4, route, B.link(index: 2, name: "eth0", flags: 0, delete: true)],
        .unsatisfied
      ),
    ])
  func rule(name: String, datagrams: [[UInt8]], expected: PathStatus) throws {
    let path = try Self.tables(datagrams).evaluate(generation: 4)
    #expect(path.status == expected, "\(name)")
    #expect(path.generation == 4)
    #expect(!path.isConstrained)
    #expect(!path.interfaces.contains { $0.kind == "loopback" || $0.name == "lo" })
  }

  @Test("each interface is reported with why")
  func interfacesReported() throws {
    let path = try Self.tables([
      lo, eth0, v4, B.address(index: 2, v6Global, prefix: 64), route,
      B.link(index: 3, name: "wlan0", flags: RT.iffUp),
    ]).evaluate(generation: 1)
    #expect(
      path.interfaces == [
        NetworkInterface(
          name: "eth0", kind: "ethernet", isUsable: true,
          addresses: ["10.0.0.2/24", "2001:db8::2/64"], hasDefaultRoute: true),
        NetworkInterface(name: "wlan0", kind: "wifi", isUsable: false),
      ])
  }

  @Test(
    "kind and cost come from the type, the driver and the name",
    arguments: [
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "eth0"), nil, "ethernet", false),
      (LinkInfo(index: 1, type: RT.arpPPP, flags: 0, name: "ppp0"), nil, "ppp", true),
      (LinkInfo(index: 1, type: RT.arpRawIP, flags: 0, name: "rmnet0"), nil, "wwan", true),
      (LinkInfo(index: 1, type: RT.arpNone, flags: 0, name: "mbim0"), nil, "wwan", true),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "wwp0s20u4"), nil, "wwan", true),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "enx1"), "wwan", "wwan", true),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "usb0"), nil, "usb", true),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "enp0s1"), "gadget", "usb", true),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "wlp2s0"), nil, "wifi", false),
      (LinkInfo(index: 1, type: RT.arpEther, flags: 0, name: "x"), "wlan", "wifi", false),
      (
        LinkInfo(index: 1, type: RT.arpNone, flags: 0, name: "wg0", kind: "wireguard"), nil,
        "tunnel", false
      ),
      (
        LinkInfo(index: 1, type: RT.arpNone, flags: 0, name: "tun0", kind: "tun"), nil, "tunnel",
        false
      ),
      (LinkInfo(index: 1, type: 768, flags: 0, name: "ipip0"), nil, "other", false),
    ] as [(LinkInfo, String?, String, Bool)])
  func classify(link: LinkInfo, deviceType: String?, kind: String, expensive: Bool) {
    let result = NetlinkTables.classify(link, deviceType: deviceType)
    #expect(result.0 == kind)
    #expect(result.1 == expensive)
  }

  @Test("the path's cost is the cost of the best default route's interface")
  func expensiveFollowsBestRoute() throws {
    let cheapWins = try Self.tables([
      eth0, v4, B.defaultRoute(interface: 2, priority: 100),
      B.link(index: 4, name: "wwan0", flags: B.upRunning, type: RT.arpRawIP),
      B.address(index: 4, [100, 64, 0, 2], prefix: 30),
      B.defaultRoute(interface: 4, gateway: [100, 64, 0, 1], priority: 700),
    ]).evaluate(generation: 0)
    #expect(cheapWins.status == .satisfied && !cheapWins.isExpensive)
    let onlyCellular = try Self.tables([
      eth0, v4,
      B.link(index: 4, name: "wwan0", flags: B.upRunning, type: RT.arpRawIP),
      B.address(index: 4, [100, 64, 0, 2], prefix: 30),
      B.defaultRoute(interface: 4, gateway: [100, 64, 0, 1], priority: 700),
    ]).evaluate(generation: 0)
    #expect(onlyCellular.status == .satisfied && onlyCellular.isExpensive)
  }

  @Test("deletes and link flag changes ask for a route dump, other changes do not")
  func consequences() throws {
    var tables = try Self.tables([eth0, v4, route])
    func apply(_ datagram: [UInt8]) throws -> TableConsequence {
      try NetlinkParser.parse(datagram).map { tables.apply($0) }.first ?? .none
    }
    #expect(try apply(B.address(index: 2, [10, 0, 0, 3], prefix: 24)) == .none)
    #expect(try apply(B.link(index: 2, name: "eth0", flags: B.upRunning)) == .none)
    #expect(
      try apply(B.link(index: 2, name: "eth0", flags: RT.iffUp | RT.iffRunning)) == .needsRouteDump)
    #expect(try apply(B.link(index: 2, name: "eth0", flags: B.upRunning)) == .needsRouteDump)
    #expect(
      try apply(B.address(index: 2, [10, 0, 0, 3], prefix: 24, delete: true)) == .needsRouteDump)
    #expect(try apply(B.link(index: 2, name: "eth0", flags: 0, delete: true)) == .needsRouteDump)
    #expect(tables.addressCount == 0)
  }

  @Test("NLM_F_REPLACE replaces the route with the same key, only default routes are kept")
  func replaceAndNonDefault() throws {
    var tables = try Self.tables([
      eth0, v4, B.link(index: 3, name: "eth1", flags: B.upRunning),
      B.address(index: 3, [10, 1, 0, 2], prefix: 24), route,
      B.defaultRoute(interface: 3, gateway: [10, 1, 0, 1], messageFlags: RT.flagReplace),
    ])
    #expect(tables.defaultRouteCount == 1)
    let path = tables.evaluate(generation: 0)
    #expect(path.interfaces.map(\.hasDefaultRoute) == [false, true])
    var nonDefault = B.defaultRoute(interface: 2)
    nonDefault[17] = 24  // rtm_dst_len
    for message in try NetlinkParser.parse(nonDefault) { _ = tables.apply(message) }
    #expect(tables.defaultRouteCount == 1)
  }

  @Test(
    "addresses print as people write them",
    arguments: [
      ([10, 0, 0, 2], RT.inet, "10.0.0.2"),
      ([0x20, 1, 0xd, 0xb8] + [UInt8](repeating: 0, count: 11) + [2], RT.inet6, "2001:db8::2"),
      ([UInt8](repeating: 0, count: 16), RT.inet6, "::"),
      ([UInt8](repeating: 0, count: 15) + [1], RT.inet6, "::1"),
      (
        [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xfc, 0, 0xff, 0xfe, 0, 0, 1], RT.inet6,
        "fe80::fc:ff:fe00:1"
      ),
      ([0x20, 1, 0xd, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0], RT.inet6, "2001:db8:0:1::1:0"),
      ([0x20, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], RT.inet6, "2001:0:0:1::1"),
      ([0x20, 1, 0xd, 0xb8, 0, 1, 0, 2, 0, 3, 0, 0, 0, 5, 0, 6], RT.inet6, "2001:db8:1:2:3:0:5:6"),
    ] as [([UInt8], UInt8, String)])
  func format(bytes: [UInt8], family: UInt8, expected: String) {
    #expect(NetlinkTables.format(bytes, family: family) == expected)
  }
}
