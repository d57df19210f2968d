// rtnetlink messages as plain Swift values, and a parser over bytes that never trusts a length.
// Pure: no socket, no C; integers are in host byte order, as the kernel sends them.

/// Constants from linux/netlink.h, linux/rtnetlink.h, linux/if.h, linux/if_arp.h and
/// linux/if_addr.h (the C macros never import into Swift).
package enum RT {
  static let headerSize = 16
  // Message types.
  static let noop: UInt16 = 1
  static let error: UInt16 = 2
  static let done: UInt16 = 3
  static let overrun: UInt16 = 4
  static let newLink: UInt16 = 16
  static let delLink: UInt16 = 17
  static let getLink: UInt16 = 18
  static let newAddress: UInt16 = 20
  static let delAddress: UInt16 = 21
  static let getAddress: UInt16 = 22
  static let newRoute: UInt16 = 24
  static let delRoute: UInt16 = 25
  static let getRoute: UInt16 = 26
  // Header flags.
  static let flagMulti: UInt16 = 0x2
  static let flagDumpInterrupted: UInt16 = 0x10
  static let flagReplace: UInt16 = 0x100
  // Multicast groups: link, IPv4 address, IPv4 route, IPv6 address, IPv6 route.
  static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
  // Link flags.
  static let iffUp: UInt32 = 0x1
  static let iffLoopback: UInt32 = 0x8
  static let iffRunning: UInt32 = 0x40
  static let iffLowerUp: UInt32 = 0x1_0000
  // Link types (ARPHRD_*).
  static let arpEther: UInt16 = 1
  static let arpPPP: UInt16 = 512
  static let arpRawIP: UInt16 = 519
  static let arpLoopback: UInt16 = 772
  static let arpNone: UInt16 = 0xFFFE
  static let arpIEEE80211: UInt16 = 801
  // Link attributes.
  static let iflaName: UInt16 = 3
  static let iflaLinkInfo: UInt16 = 18
  static let iflaInfoKind: UInt16 = 1
  // Address attributes and flags.
  static let ifaAddress: UInt16 = 1
  static let ifaLocal: UInt16 = 2
  static let ifaFlags: UInt16 = 8
  static let ifaOptimistic: UInt32 = 0x04
  static let ifaDadFailed: UInt32 = 0x08
  static let ifaTentative: UInt32 = 0x40
  // Scopes.
  static let scopeUniverse: UInt8 = 0
  // Route attributes, types and next-hop flags.
  static let rtaDestination: UInt16 = 1
  static let rtaOutputInterface: UInt16 = 4
  static let rtaGateway: UInt16 = 5
  static let rtaPriority: UInt16 = 6
  static let rtaMultipath: UInt16 = 9
  static let rtaTable: UInt16 = 15
  static let rtnUnicast: UInt8 = 1
  static let nextHopDead: UInt32 = 0x1
  static let nextHopLinkDown: UInt32 = 0x10
  // Address families.
  static let inet: UInt8 = 2
  static let inet6: UInt8 = 10
}

/// A link (`ifinfomsg` and the attributes kept).
package struct LinkInfo: Sendable, Hashable {
  /// The interface index.
  package var index: Int32
  /// The ARPHRD_* type.
  package var type: UInt16
  /// The IFF_* flags.
  package var flags: UInt32
  /// IFLA_IFNAME.
  package var name: String
  /// IFLA_INFO_KIND inside IFLA_LINKINFO (`veth`, `wireguard`, `tun`...).
  package var kind: String?

  package init(index: Int32, type: UInt16, flags: UInt32, name: String, kind: String? = nil) {
    self.index = index
    self.type = type
    self.flags = flags
    self.name = name
    self.kind = kind
  }
}

/// An address (`ifaddrmsg` and the attributes kept).
package struct AddressInfo: Sendable, Hashable {
  /// AF_INET or AF_INET6.
  package var family: UInt8
  /// The prefix length.
  package var prefixLength: UInt8
  /// IFA_F_* flags, from the 32-bit IFA_FLAGS when present.
  package var flags: UInt32
  /// RT_SCOPE_*.
  package var scope: UInt8
  /// The interface index.
  package var index: Int32
  /// The local address bytes (IFA_LOCAL, else IFA_ADDRESS).
  package var address: [UInt8]

  package init(
    family: UInt8, prefixLength: UInt8, flags: UInt32, scope: UInt8, index: Int32,
    address: [UInt8]
  ) {
    self.family = family
    self.prefixLength = prefixLength
    self.flags = flags
    self.scope = scope
    self.index = index
    self.address = address
  }
}

/// One way out of a route.
package struct NextHop: Sendable, Hashable {
  /// The output interface.
  package var index: Int32
  /// RTNH_F_* flags.
  package var flags: UInt32
}

/// A route (`rtmsg` and the attributes kept).
package struct RouteInfo: Sendable, Hashable {
  /// AF_INET or AF_INET6.
  package var family: UInt8
  /// The destination prefix length (0 for a default route).
  package var destinationLength: UInt8
  /// The type of service.
  package var tos: UInt8
  /// The table (RTA_TABLE when present, rtm_table otherwise).
  package var table: UInt32
  /// RTN_* type.
  package var type: UInt8
  /// RTNH_F_* flags of a single-path route.
  package var flags: UInt32
  /// The destination bytes.
  package var destination: [UInt8]
  /// The gateway bytes.
  package var gateway: [UInt8]
  /// RTA_PRIORITY (the metric).
  package var priority: UInt32
  /// The ways out: RTA_OIF, or each RTA_MULTIPATH next hop.
  package var nextHops: [NextHop]

  package init(
    family: UInt8, destinationLength: UInt8 = 0, tos: UInt8 = 0, table: UInt32 = 254,
    type: UInt8 = 1, flags: UInt32 = 0, destination: [UInt8] = [], gateway: [UInt8] = [],
    priority: UInt32 = 0, nextHops: [NextHop] = []
  ) {
    self.family = family
    self.destinationLength = destinationLength
    self.tos = tos
    self.table = table
    self.type = type
    self.flags = flags
    self.destination = destination
    self.gateway = gateway
    self.priority = priority
    self.nextHops = nextHops
  }
}

/// What one netlink message says.
package enum NetlinkPayload: Sendable, Hashable {
  case newLink(LinkInfo)
  case deleteLink(LinkInfo)
  case newAddress(AddressInfo)
  case deleteAddress(AddressInfo)
  case newRoute(RouteInfo)
  case deleteRoute(RouteInfo)
  /// The end of a dump.
  case done
  /// An error report (negative errno; 0 is an acknowledgement).
  case error(Int32)
  /// A message the monitor does not use.
  case other(UInt16)
}

/// One netlink message: its header fields and payload.
package struct NetlinkMessage: Sendable, Hashable {
  package var type: UInt16
  package var flags: UInt16
  package var sequence: UInt32
  package var portID: UInt32
  package var payload: NetlinkPayload
}

/// Why bytes were not a valid netlink datagram. Each case names where it went wrong.
package enum NetlinkParseError: Error, Hashable, CustomStringConvertible {
  /// Fewer bytes than a message header remain at `offset`.
  case truncatedHeader(offset: Int)
  /// The header at `offset` claims `length`, below a header or past the `remaining` bytes.
  case badLength(offset: Int, length: Int, remaining: Int)
  /// The message at `offset` of `type` is too short for its fixed body.
  case truncatedBody(offset: Int, type: UInt16)
  /// An attribute inside the message at `offset` has a lying length.
  case badAttribute(offset: Int, type: UInt16)

  package var description: String {
    switch self {
    case .truncatedHeader(let offset): "netlink: truncated header at byte \(offset)"
    case .badLength(let offset, let length, let remaining):
      "netlink: message at byte \(offset) claims \(length) bytes, \(remaining) remain"
    case .truncatedBody(let offset, let type):
      "netlink: message type \(type) at byte \(offset) is shorter than its header"
    case .badAttribute(let offset, let type):
      "netlink: attribute with a bad length in message type \(type) at byte \(offset)"
    }
  }
}

/// Parses netlink datagrams. Every read is bounds-checked: malformed input throws, never traps.
package enum NetlinkParser {
  /// Parses every message in one datagram.
  /// - Parameter bytes: the datagram.
  /// - Returns: the messages, in order.
  /// - Throws: `NetlinkParseError` naming the first malformed spot.
  package static func parse(_ bytes: [UInt8]) throws(NetlinkParseError) -> [NetlinkMessage] {
    var messages: [NetlinkMessage] = []
    var offset = 0
    while offset < bytes.count {
      let remaining = bytes.count - offset
      guard remaining >= RT.headerSize else { throw .truncatedHeader(offset: offset) }
      let length = Int(u32(bytes, offset))
      guard length >= RT.headerSize, length <= remaining else {
        throw .badLength(offset: offset, length: length, remaining: remaining)
      }
      let type = u16(bytes, offset + 4)
      let body = (offset + RT.headerSize)..<(offset + length)
      let payload = try parsePayload(bytes, type: type, body: body, offset: offset)
      messages.append(
        NetlinkMessage(
          type: type, flags: u16(bytes, offset + 6), sequence: u32(bytes, offset + 8),
          portID: u32(bytes, offset + 12), payload: payload))
      offset += align(length)
    }
    return messages
  }

  private static func parsePayload(
    _ bytes: [UInt8], type: UInt16, body: Range<Int>, offset: Int
  ) throws(NetlinkParseError) -> NetlinkPayload {
    func need(_ size: Int) throws(NetlinkParseError) {
      if body.count < size { throw .truncatedBody(offset: offset, type: type) }
    }
    switch type {
    case RT.error:
      try need(4)
      return .error(Int32(bitPattern: u32(bytes, body.lowerBound)))
    case RT.done:
      return .done
    case RT.newLink, RT.delLink:
      try need(16)
      let link = try parseLink(bytes, body: body, offset: offset, type: type)
      return type == RT.newLink ? .newLink(link) : .deleteLink(link)
    case RT.newAddress, RT.delAddress:
      try need(8)
      let address = try parseAddress(bytes, body: body, offset: offset, type: type)
      return type == RT.newAddress ? .newAddress(address) : .deleteAddress(address)
    case RT.newRoute, RT.delRoute:
      try need(12)
      let route = try parseRoute(bytes, body: body, offset: offset, type: type)
      return type == RT.newRoute ? .newRoute(route) : .deleteRoute(route)
    default:
      return .other(type)
    }
  }

  private static func parseLink(
    _ bytes: [UInt8], body: Range<Int>, offset: Int, type: UInt16
  ) throws(NetlinkParseError) -> LinkInfo {
    let start = body.lowerBound
    var link = LinkInfo(
      index: Int32(bitPattern: u32(bytes, start + 4)), type: u16(bytes, start + 2),
      flags: u32(bytes, start + 8), name: "")
    let attributes = try self.attributes(
      bytes, in: (start + 16)..<body.upperBound, offset: offset, type: type)
    for (kind, range) in attributes {
      switch kind {
      case RT.iflaName: link.name = string(bytes, range)
      case RT.iflaLinkInfo:
        let nested = try self.attributes(bytes, in: range, offset: offset, type: type)
        if let info = nested.first(where: { $0.type == RT.iflaInfoKind }) {
          link.kind = string(bytes, info.range)
        }
      default: break
      }
    }
    return link
  }

  private static func parseAddress(
    _ bytes: [UInt8], body: Range<Int>, offset: Int, type: UInt16
  ) throws(NetlinkParseError) -> AddressInfo {
    let start = body.lowerBound
    var address = AddressInfo(
      family: bytes[start], prefixLength: bytes[start + 1], flags: UInt32(bytes[start + 2]),
      scope: bytes[start + 3], index: Int32(bitPattern: u32(bytes, start + 4)), address: [])
    var local: [UInt8]?
    var peer: [UInt8]?
    let attributes = try self.attributes(
      bytes, in: (start + 8)..<body.upperBound, offset: offset, type: type)
    for (kind, range) in attributes {
      switch kind {
      case RT.ifaLocal: local = Array(bytes[range])
      case RT.ifaAddress: peer = Array(bytes[range])
      case RT.ifaFlags where range.count >= 4: address.flags = u32(bytes, range.lowerBound)
      default: break
      }
    }
    address.address = local ?? peer ?? []
    return address
  }

  private static func parseRoute(
    _ bytes: [UInt8], body: Range<Int>, offset: Int, type: UInt16
  ) throws(NetlinkParseError) -> RouteInfo {
    let start = body.lowerBound
    var route = RouteInfo(
      family: bytes[start], destinationLength: bytes[start + 1], tos: bytes[start + 3],
      table: UInt32(bytes[start + 4]), type: bytes[start + 7], flags: u32(bytes, start + 8))
    let attributes = try self.attributes(
      bytes, in: (start + 12)..<body.upperBound, offset: offset, type: type)
    for (kind, range) in attributes {
      switch kind {
      case RT.rtaDestination: route.destination = Array(bytes[range])
      case RT.rtaGateway: route.gateway = Array(bytes[range])
      case RT.rtaOutputInterface where range.count >= 4:
        route.nextHops = [
          NextHop(index: Int32(bitPattern: u32(bytes, range.lowerBound)), flags: route.flags)
        ]
      case RT.rtaPriority where range.count >= 4: route.priority = u32(bytes, range.lowerBound)
      case RT.rtaTable where range.count >= 4: route.table = u32(bytes, range.lowerBound)
      case RT.rtaMultipath:
        route.nextHops = try nextHops(bytes, in: range, offset: offset, type: type)
      default: break
      }
    }
    return route
  }

  // struct rtnexthop { u16 len; u8 flags; u8 hops; i32 ifindex; } followed by attributes.
  private static func nextHops(
    _ bytes: [UInt8], in range: Range<Int>, offset: Int, type: UInt16
  ) throws(NetlinkParseError) -> [NextHop] {
    var hops: [NextHop] = []
    var cursor = range.lowerBound
    while range.upperBound - cursor >= 8 {
      let length = Int(u16(bytes, cursor))
      guard length >= 8, length <= range.upperBound - cursor else {
        throw .badAttribute(offset: offset, type: type)
      }
      hops.append(
        NextHop(index: Int32(bitPattern: u32(bytes, cursor + 4)), flags: UInt32(bytes[cursor + 2])))
      cursor += align(length)
    }
    return hops
  }

  /// Splits `range` into (type, value range) attributes; a length that lies throws.
  private static func attributes(
    _ bytes: [UInt8], in range: Range<Int>, offset: Int, type: UInt16
  ) throws(NetlinkParseError) -> [(type: UInt16, range: Range<Int>)] {
    var result: [(type: UInt16, range: Range<Int>)] = []
    var cursor = range.lowerBound
    while cursor < range.upperBound {
      guard range.upperBound - cursor >= 4 else { throw .badAttribute(offset: offset, type: type) }
      let length = Int(u16(bytes, cursor))
      guard length >= 4, length <= range.upperBound - cursor else {
        throw .badAttribute(offset: offset, type: type)
      }
      // The top two bits are NLA_F_NESTED and NLA_F_NET_BYTEORDER.
      result.append((u16(bytes, cursor + 2) & 0x3FFF, (cursor + 4)..<(cursor + length)))
      cursor = min(range.upperBound, cursor + align(length))
    }
    return result
  }

  static func align(_ length: Int) -> Int { (length + 3) & ~3 }

  static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
    bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt16.self) }
  }

  static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
  }

  private static func string(_ bytes: [UInt8], _ range: Range<Int>) -> String {
    let slice = bytes[range]
    let end = slice.firstIndex(of: 0) ?? slice.endIndex
    return String(decoding: slice[slice.startIndex..<end], as: UTF8.self)
  }
}
