import CourierDomain
import Testing

/// The OS's facts merged into the netlink monitor's path (decision 2601): pure.
@Suite("PathFactsMerge")
struct PathFactsMergeTests {
  static let wlan0 = NetworkInterface(
    name: "wlan0", kind: "wifi", isUsable: true, addresses: ["192.168.1.5/24"],
    hasDefaultRoute: true)
  static let wwan0 = NetworkInterface(
    name: "wwan0", kind: "wwan", isUsable: true, addresses: ["10.64.1.2/30"],
    hasDefaultRoute: true, isExpensive: true)
  static let satisfied = NetworkPath(status: .satisfied, generation: 4, interfaces: [wlan0])

  static func manager(
    _ metered: OSPathFacts.Metered, _ connectivity: OSPathFacts.Connectivity = .full
  ) -> OSPathFacts {
    OSPathFacts(service: .networkManager, metered: metered, connectivity: connectivity)
  }

  @Test(
    "Metered: yes and guess-yes are expensive, no and guess-no are not, unknown keeps netlink's",
    arguments: [
      (OSPathFacts.Metered.yes, true, PathFactSource.networkManager),
      (.guessYes, true, .networkManager),
      (.no, false, .networkManager),
      (.guessNo, false, .networkManager),
      (.unknown, false, .netlink),
    ])
  func metered(metered: OSPathFacts.Metered, expensive: Bool, source: PathFactSource) {
    let merged = PathFactsMerge.merge(
      Self.satisfied, with: Self.manager(metered), rule: ConstrainedRule())
    #expect(merged.isExpensive == expensive)
    #expect(merged.sources.expensive == source)
    #expect(merged.generation == 4, "the monitor's generation is kept")
  }

  @Test("NetworkManager's guess-no overrides netlink's cellular guess; unknown keeps it")
  func meteredOverridesLinkKind() {
    let cellular = NetworkPath(
      status: .satisfied, isExpensive: true, generation: 1, interfaces: [Self.wwan0])
    let no = PathFactsMerge.merge(cellular, with: Self.manager(.guessNo), rule: ConstrainedRule())
    #expect(no.isExpensive == false)
    let unknown = PathFactsMerge.merge(
      cellular, with: Self.manager(.unknown), rule: ConstrainedRule())
    #expect(unknown.isExpensive == true)
    #expect(unknown.sources.expensive == .netlink)
  }

  @Test("connectivity portal holds a satisfied or unknown path; never an unsatisfied one")
  func portal() {
    let facts = Self.manager(.no, .portal)
    let merged = PathFactsMerge.merge(Self.satisfied, with: facts, rule: ConstrainedRule())
    #expect(merged.status == .captivePortal)
    #expect(merged.sources.status == .networkManager)
    let early = PathFactsMerge.merge(.unknown, with: facts, rule: ConstrainedRule())
    #expect(early.status == .captivePortal)
    let down = NetworkPath(status: .unsatisfied, generation: 4)
    let stillDown = PathFactsMerge.merge(down, with: facts, rule: ConstrainedRule())
    #expect(stillDown.status == .unsatisfied)
    #expect(stillDown.sources.status == .netlink)
  }

  @Test(
    "connectivity none, limited, full or unknown never override netlink's status",
    arguments: [OSPathFacts.Connectivity.none, .limited, .full, .unknown])
  func otherConnectivity(connectivity: OSPathFacts.Connectivity) {
    let merged = PathFactsMerge.merge(
      Self.satisfied, with: Self.manager(.no, connectivity), rule: ConstrainedRule())
    #expect(merged.status == .satisfied)
  }

  @Test("networkd, no service and no bus leave netlink's facts, and say so")
  func otherServices() {
    for facts in [
      OSPathFacts(service: .networkd, onlineState: "online", operationalState: "routable"),
      OSPathFacts(service: .noService), OSPathFacts(service: .noBus("no socket")), .off,
    ] {
      let merged = PathFactsMerge.merge(Self.satisfied, with: facts, rule: ConstrainedRule())
      #expect(merged.status == .satisfied)
      #expect(merged.isExpensive == false)
      #expect(merged.sources.expensive == .netlink)
      #expect(merged.sources.os == facts)
    }
  }

  @Test("the constrained rule matches names, prefixes, link kinds and connection types")
  func constrained() throws {
    func rule(_ text: String) throws -> ConstrainedRule { try ConstrainedRule.parse(text).get() }
    let tethered = NetworkPath(status: .satisfied, generation: 1, interfaces: [Self.wwan0])
    for text in ["wwan0", "ww*", "wwan", " eth9 , wwan0 "] {
      let merged = PathFactsMerge.merge(tethered, with: .off, rule: try rule(text))
      #expect(merged.isConstrained, "\(text)")
      #expect(merged.sources.constrained == .configuration)
    }
    let hotspot = OSPathFacts(
      service: .networkManager, metered: .guessYes, connectivity: .full,
      primary: .init(id: "Phone", type: "bluetooth", interface: "bnep0"))
    let viaType = PathFactsMerge.merge(Self.satisfied, with: hotspot, rule: try rule("bluetooth"))
    #expect(viaType.isConstrained)
    let none = PathFactsMerge.merge(Self.satisfied, with: hotspot, rule: try rule("gsm, usb*"))
    #expect(none.isConstrained == false)
    #expect(none.sources.constrained == .configuration)
    let unset = PathFactsMerge.merge(Self.satisfied, with: hotspot, rule: ConstrainedRule())
    #expect(unset.sources.constrained == .none)
  }

  @Test("a down interface never makes the path constrained")
  func constrainedOnlyCarrying() throws {
    let down = NetworkInterface(name: "wwan0", kind: "wwan", isUsable: false)
    let path = NetworkPath(status: .satisfied, interfaces: [Self.wlan0, down])
    let merged = PathFactsMerge.merge(
      path, with: .off, rule: try ConstrainedRule.parse("wwan0").get())
    #expect(merged.isConstrained == false)
  }

  @Test("a bad rule is refused with a sentence", arguments: ["wwan0,,eth0", "*", "a*b", "wlan 0"])
  func badRule(text: String) {
    guard case .failure(let problem) = ConstrainedRule.parse(text) else {
      Issue.record("“\(text)” was accepted")
      return
    }
    #expect(problem.message.hasSuffix("."))
  }

  @Test("the JSON carries each fact's source and what NetworkManager said")
  func json() throws {
    let facts = OSPathFacts(
      service: .networkManager, metered: .guessYes, connectivity: .portal,
      primary: .init(id: "Hotel", type: "802-11-wireless", interface: "wlan0"))
    let merged = PathFactsMerge.merge(Self.satisfied, with: facts, rule: ConstrainedRule())
    let text = PathReport.json(merged, at: .init(timeIntervalSince1970: 0))
    #expect(
      text.contains(
        #""status":"captivePortal","expensive":true,"constrained":false,"#
          + #""sources":{"status":"NetworkManager","expensive":"NetworkManager","#
          + #""constrained":"none"},"os":{"service":"NetworkManager","metered":"guess-yes","#
          + #""connectivity":"portal","primary":{"id":"Hotel","type":"802-11-wireless","#
          + #""interface":"wlan0"}},"interfaces":["#), "\(text)")
  }

  @Test("status says when there is no system D-Bus")
  func noBusSentence() {
    let merged = PathFactsMerge.merge(
      Self.satisfied, with: OSPathFacts(service: .noBus("no such file")), rule: ConstrainedRule())
    let details = PathReport.details(merged)
    #expect(
      details.contains(
        "no system D-Bus: metered and portal states come from netlink alone (no such file)"),
      "\(details)")
  }
}
