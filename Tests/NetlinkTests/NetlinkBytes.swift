@testable import CourierNetlink

/// Builds netlink datagrams byte by byte, in host order, for parser and table tests.
enum NetlinkBytes {
  static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
  static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
  static func i32(_ value: Int32) -> [UInt8] { u32(UInt32(bitPattern: value)) }

  static func padded(_ bytes: [UInt8]) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: NetlinkParser.align(bytes.count) - bytes.count)
  }

  static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
    padded(u16(UInt16(4 + value.count)) + u16(type) + value)
  }

  static func string(_ type: UInt16, _ text: String) -> [UInt8] {
    attribute(type, Array(text.utf8) + [0])
  }

  static func message(
    type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, pid: UInt32 = 0, body: [UInt8]
  ) -> [UInt8] {
    padded(u32(UInt32(16 + body.count)) + u16(type) + u16(flags) + u32(sequence) + u32(pid) + body)
  }

  static func link(
    index: Int32, name: String, flags: UInt32, type: UInt16 = RT.arpEther, kind: String? = nil,
    delete: Bool = false
  ) -> [UInt8] {
    var body: [UInt8] = [0, 0] + u16(type) + i32(index) + u32(flags) + u32(0xFFFF_FFFF)
    body += string(RT.iflaName, name)
    if let kind { body += attribute(RT.iflaLinkInfo, string(RT.iflaInfoKind, kind)) }
    return message(type: delete ? RT.delLink : RT.newLink, body: body)
  }

  static func address(
    index: Int32, _ address: [UInt8], prefix: UInt8, scope: UInt8 = 0, flags: UInt32 = 0,
    delete: Bool = false
  ) -> [UInt8] {
    let family = address.count == 4 ? RT.inet : RT.inet6
    var body: [UInt8] = [family, prefix, UInt8(truncatingIfNeeded: flags), scope] + i32(index)
    body += attribute(RT.ifaAddress, address)
    if family == RT.inet { body += attribute(RT.ifaLocal, address) }
    body += attribute(RT.ifaFlags, u32(flags))
    return message(type: delete ? RT.delAddress : RT.newAddress, body: body)
  }

  static func defaultRoute(
    family: UInt8 = RT.inet, interface: Int32, gateway: [UInt8] = [10, 0, 0, 1],
    table: UInt32 = 254, flags: UInt32 = 0, priority: UInt32 = 0, type: UInt8 = RT.rtnUnicast,
    multipath: [(Int32, UInt8)]? = nil, delete: Bool = false, messageFlags: UInt16 = 0
  ) -> [UInt8] {
    var body: [UInt8] = [family, 0, 0, 0, UInt8(min(table, 252)), 3, 0, type] + u32(flags)
    body += attribute(RT.rtaTable, u32(table))
    body += attribute(RT.rtaPriority, u32(priority))
    if let multipath {
      var hops: [UInt8] = []
      for (index, hopFlags) in multipath { hops += u16(8) + [hopFlags, 0] + i32(index) }
      body += attribute(RT.rtaMultipath, hops)
    } else {
      body += attribute(RT.rtaGateway, gateway)
      body += attribute(RT.rtaOutputInterface, i32(interface))
    }
    return message(
      type: delete ? RT.delRoute : RT.newRoute, flags: messageFlags, body: body)
  }

  static let upRunning = RT.iffUp | RT.iffRunning | RT.iffLowerUp
}
