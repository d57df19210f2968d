import CourierDomain

/// What the monitor must do after applying a message.
package enum TableConsequence: Sendable, Hashable {
  /// Nothing more.
  case none
  /// Dump routes again: the kernel removes IPv4 routes with an address or a link without
  /// sending RTM_DELROUTE, and clears `linkdown` on routes silently when carrier returns.
  case needsRouteDump
}

/// The kernel's links, addresses and default routes as last heard, and the rule that turns them
/// into a `NetworkPath`. Pure.
package struct NetlinkTables: Sendable, Hashable {
  struct AddressKey: Hashable {
    var index: Int32
    var family: UInt8
    var prefixLength: UInt8
    var address: [UInt8]
  }

  struct RouteKey: Hashable {
    var family: UInt8
    var table: UInt32
    var tos: UInt8
    var priority: UInt32
    var gateway: [UInt8]
    var interfaces: [Int32]
  }

  package private(set) var links: [Int32: LinkInfo] = [:]
  private(set) var addresses: [AddressKey: AddressInfo] = [:]
  // Only default routes are kept: the rule needs nothing else, and a full table can be large.
  private(set) var routes: [RouteKey: RouteInfo] = [:]
  /// DEVTYPE from the interface's uevent (`wlan`, `wwan`, `gadget`), when known.
  package var deviceTypes: [Int32: String] = [:]

  package init() {}

  /// How many addresses are held.
  package var addressCount: Int { addresses.count }
  /// How many default routes are held.
  package var defaultRouteCount: Int { routes.count }

  /// Applies one message.
  /// - Parameter message: the message.
  /// - Returns: whether routes must be dumped again.
  package mutating func apply(_ message: NetlinkMessage) -> TableConsequence {
    switch message.payload {
    case .newLink(let link):
      let mask = RT.iffUp | RT.iffRunning | RT.iffLowerUp
      let before = links[link.index]
      links[link.index] = link
      if let before, before.flags & mask != link.flags & mask { return .needsRouteDump }
      return .none
    case .deleteLink(let link):
      links[link.index] = nil
      deviceTypes[link.index] = nil
      addresses = addresses.filter { $0.key.index != link.index }
      return .needsRouteDump
    case .newAddress(let address):
      addresses[Self.key(address)] = address
      return .none
    case .deleteAddress(let address):
      addresses[Self.key(address)] = nil
      return .needsRouteDump
    case .newRoute(let route):
      guard route.destinationLength == 0 else { return .none }
      if message.flags & RT.flagReplace != 0 {
        routes = routes.filter {
          !($0.key.family == route.family && $0.key.table == route.table
            && $0.key.tos == route.tos && $0.key.priority == route.priority)
        }
      }
      routes[Self.key(route)] = route
      return .none
    case .deleteRoute(let route):
      guard route.destinationLength == 0 else { return .none }
      routes[Self.key(route)] = nil
      return .none
    case .done, .error, .other:
      return .none
    }
  }

  /// Replaces the routes with a fresh dump's.
  /// - Parameter dumped: the dump's messages.
  package mutating func replaceRoutes(with dumped: NetlinkTables) { routes = dumped.routes }

  static func key(_ address: AddressInfo) -> AddressKey {
    AddressKey(
      index: address.index, family: address.family, prefixLength: address.prefixLength,
      address: address.address)
  }

  static func key(_ route: RouteInfo) -> RouteKey {
    RouteKey(
      family: route.family, table: route.table, tos: route.tos, priority: route.priority,
      gateway: route.gateway, interfaces: route.nextHops.map(\.index))
  }

  // MARK: - The rule

  /// The path these tables describe.
  ///
  /// Satisfied when a non-loopback link is UP, RUNNING and LOWER_UP, holds a usable address
  /// (global scope; not tentative, DAD-failed or optimistic) and a unicast default route of that
  /// address's family goes through it, in any routing table, not flagged dead or linkdown.
  /// - Parameter generation: the generation to stamp.
  /// - Returns: the path.
  package func evaluate(generation: UInt64) -> NetworkPath {
    var interfaces: [NetworkInterface] = []
    var best: (priority: UInt32, expensive: Bool)?
    for link in links.values.sorted(by: { $0.index < $1.index }) {
      if link.flags & RT.iffLoopback != 0 || link.type == RT.arpLoopback { continue }
      let usable =
        link.flags & (RT.iffUp | RT.iffRunning | RT.iffLowerUp)
        == (RT.iffUp | RT.iffRunning | RT.iffLowerUp)
      let usableAddresses = addresses.values
        .filter { $0.index == link.index && Self.isUsable($0) }
        .sorted {
          $0.family != $1.family
            ? $0.family < $1.family : $0.address.lexicographicallyPrecedes($1.address)
        }
      let families = Set(usableAddresses.map(\.family))
      let defaults = routes.values.filter { Self.isUsableDefault($0, through: link.index) }
      let (kind, expensive) = Self.classify(link, deviceType: deviceTypes[link.index])
      interfaces.append(
        NetworkInterface(
          name: link.name, kind: kind, isUsable: usable,
          addresses: usableAddresses.map(Self.text), hasDefaultRoute: !defaults.isEmpty,
          isExpensive: expensive))
      let carrying = defaults.filter { families.contains($0.family) }.map(\.priority).min()
      if usable, let priority = carrying, priority < best?.priority ?? .max {
        best = (priority, expensive)
      }
    }
    return NetworkPath(
      status: best == nil ? .unsatisfied : .satisfied, isExpensive: best?.expensive ?? false,
      isConstrained: false, generation: generation, interfaces: interfaces)
  }

  static let unusableHop = RT.nextHopDead | RT.nextHopLinkDown

  static func isUsableDefault(_ route: RouteInfo, through index: Int32) -> Bool {
    route.type == RT.rtnUnicast && route.destinationLength == 0
      && route.flags & unusableHop == 0
      && route.nextHops.contains { $0.index == index && $0.flags & unusableHop == 0 }
  }

  static func isUsable(_ address: AddressInfo) -> Bool {
    address.scope == RT.scopeUniverse
      && address.flags & (RT.ifaTentative | RT.ifaDadFailed | RT.ifaOptimistic) == 0
      && (address.family == RT.inet || address.family == RT.inet6)
  }

  static let tunnelKinds: Set<String> = [
    "wireguard", "tun", "ipip", "gre", "ip6gre", "sit", "ip6tnl", "vti", "vti6", "xfrm",
    "ipsec", "openvpn", "amneziawg",
  ]

  /// The kind shown for a link, and whether it is likely metered. Linux has no metered flag
  /// of its own: the type, the driver's DEVTYPE and the usual names are all there is.
  /// - Parameters:
  ///   - link: the link.
  ///   - deviceType: DEVTYPE from its uevent, when known.
  /// - Returns: the kind and whether it is expensive.
  static func classify(_ link: LinkInfo, deviceType: String?) -> (String, Bool) {
    if let kind = link.kind, tunnelKinds.contains(kind) { return ("tunnel", false) }
    if link.type == RT.arpPPP { return ("ppp", true) }
    if deviceType == "wwan" || link.name.hasPrefix("wwan") || link.name.hasPrefix("ww") {
      return ("wwan", true)
    }
    if link.type == RT.arpRawIP || link.type == RT.arpNone { return ("wwan", true) }
    if deviceType == "gadget" || link.name.hasPrefix("usb") || link.name.hasPrefix("rndis") {
      return ("usb", true)
    }
    if deviceType == "wlan" || link.type == RT.arpIEEE80211 || link.name.hasPrefix("wl") {
      return ("wifi", false)
    }
    if link.type == RT.arpEther { return ("ethernet", false) }
    return ("other", false)
  }

  /// An address as text with its prefix length: `10.0.0.2/24`, `2001:db8::2/64`.
  /// - Parameter address: the address.
  /// - Returns: the text.
  static func text(_ address: AddressInfo) -> String {
    "\(format(address.address, family: address.family))/\(address.prefixLength)"
  }

  /// An IPv4 address in dotted decimal or an IPv6 address in RFC 5952 form.
  /// - Parameters:
  ///   - bytes: the address bytes.
  ///   - family: AF_INET or AF_INET6.
  /// - Returns: the text; hex bytes for anything else.
  static func format(_ bytes: [UInt8], family: UInt8) -> String {
    // Joined by hand: `joined(separator:)` is called unspecialised here, and its generic
    // witness lookups were a tenth of what `courier status` cost.
    func joined(_ parts: [String], _ range: Range<Int>, _ separator: String) -> String {
      var text = ""
      for index in range {
        if index > range.lowerBound { text += separator }
        text += parts[index]
      }
      return text
    }
    if family == RT.inet, bytes.count == 4 {
      return joined(bytes.map { String($0) }, 0..<4, ".")
    }
    guard family == RT.inet6, bytes.count == 16 else {
      return joined(bytes.map { String($0, radix: 16) }, 0..<bytes.count, ":")
    }
    let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
    // The longest run of two or more zero groups (the first if tied) becomes "::".
    var bestStart = -1
    var bestLength = 0
    var index = 0
    while index < 8 {
      guard groups[index] == 0 else {
        index += 1
        continue
      }
      let start = index
      while index < 8 && groups[index] == 0 { index += 1 }
      if index - start > bestLength && index - start >= 2 {
        bestStart = start
        bestLength = index - start
      }
    }
    let hex = groups.map { String($0, radix: 16) }
    guard bestStart >= 0 else { return joined(hex, 0..<8, ":") }
    return joined(hex, 0..<bestStart, ":") + "::" + joined(hex, (bestStart + bestLength)..<8, ":")
  }
}
