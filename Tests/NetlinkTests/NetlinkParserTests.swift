import CourierTestSupport
import Testing

@testable import CourierNetlink

private typealias B = NetlinkBytes
private let validLink: [UInt8] = NetlinkBytes.link(
  index: 2, name: "eth0", flags: NetlinkBytes.upRunning)

/// One malformed datagram and the error it must produce.
struct Malformed: Sendable, CustomTestStringConvertible {
  var name: String
  var bytes: [UInt8]
  var expected: NetlinkParseError
  var testDescription: String { name }
}

private let zeros16 = [UInt8](repeating: 0, count: 16)
private let rtmsgHeader: [UInt8] = [2, 0, 0, 0, 254, 0, 0, 1] + B.u32(0)
private let lyingHop: [UInt8] = B.u16(12) + B.u16(9) + B.u16(40) + [0, 0] + B.i32(2)
private let nestedLie: [UInt8] = B.u16(8) + B.u16(18) + B.u16(60) + B.u16(1)
private let afterLength = Array(validLink.dropFirst(4))

private let malformedCases: [Malformed] = [
  Malformed(
    name: "15 bytes", bytes: Array(validLink.prefix(15)), expected: .truncatedHeader(offset: 0)),
  Malformed(
    name: "length below a header", bytes: B.u32(8) + afterLength,
    expected: .badLength(offset: 0, length: 8, remaining: validLink.count)),
  Malformed(
    name: "length past the end", bytes: B.u32(4096) + afterLength,
    expected: .badLength(offset: 0, length: 4096, remaining: validLink.count)),
  Malformed(
    name: "length of 4 GiB", bytes: B.u32(.max) + afterLength,
    expected: .badLength(offset: 0, length: Int(UInt32.max), remaining: validLink.count)),
  Malformed(
    name: "link body shorter than ifinfomsg",
    bytes: B.message(type: RT.newLink, body: [0, 0, 1, 0]),
    expected: .truncatedBody(offset: 0, type: RT.newLink)),
  Malformed(
    name: "route body shorter than rtmsg", bytes: B.message(type: RT.newRoute, body: [2, 0, 0, 0]),
    expected: .truncatedBody(offset: 0, type: RT.newRoute)),
  Malformed(
    name: "error without errno", bytes: B.message(type: RT.error, body: []),
    expected: .truncatedBody(offset: 0, type: RT.error)),
  Malformed(
    name: "attribute longer than the message",
    bytes: B.message(type: RT.newLink, body: zeros16 + B.u16(200) + B.u16(3)),
    expected: .badAttribute(offset: 0, type: RT.newLink)),
  Malformed(
    name: "attribute shorter than its header",
    bytes: B.message(type: RT.newAddress, body: [2, 24, 0, 0, 1, 0, 0, 0] + B.u16(2) + B.u16(1)),
    expected: .badAttribute(offset: 0, type: RT.newAddress)),
  Malformed(
    name: "nested attribute that lies",
    bytes: B.message(type: RT.newLink, body: zeros16 + nestedLie),
    expected: .badAttribute(offset: 0, type: RT.newLink)),
  Malformed(
    name: "next hop that lies", bytes: B.message(type: RT.newRoute, body: rtmsgHeader + lyingHop),
    expected: .badAttribute(offset: 0, type: RT.newRoute)),
  Malformed(
    name: "second message truncated", bytes: validLink + Array(validLink.prefix(10)),
    expected: .truncatedHeader(offset: validLink.count)),
]

@Suite("NetlinkParser")
struct NetlinkParserTests {
  @Test("a datagram of several messages parses in order with its header fields")
  func valid() throws {
    let datagram =
      B.link(index: 2, name: "eth0", flags: B.upRunning, kind: "veth")
      + B.address(index: 2, [10, 0, 0, 2], prefix: 24, flags: RT.ifaTentative)
      + B.defaultRoute(interface: 2, table: 51820, priority: 7)
      + B.message(type: RT.done, flags: RT.flagMulti, sequence: 9, pid: 0, body: B.u32(0))
    let messages = try NetlinkParser.parse(datagram)
    #expect(messages.count == 4)
    #expect(
      messages[0].payload
        == .newLink(LinkInfo(index: 2, type: 1, flags: B.upRunning, name: "eth0", kind: "veth")))
    guard case .newAddress(let address) = messages[1].payload else {
      Issue.record("not an address: \(messages[1])")
      return
    }
    #expect(address.address == [10, 0, 0, 2] && address.prefixLength == 24)
    #expect(address.flags == RT.ifaTentative)
    guard case .newRoute(let route) = messages[2].payload else {
      Issue.record("not a route: \(messages[2])")
      return
    }
    #expect(route.table == 51820 && route.priority == 7)
    #expect(route.nextHops == [NextHop(index: 2, flags: 0)])
    #expect(messages[3].payload == .done && messages[3].sequence == 9)
  }

  @Test("the 32-bit IFA_FLAGS wins over the 8-bit header field")
  func wideFlags() throws {
    // IFA_F_NOPREFIXROUTE (0x200) does not fit the header byte.
    let messages = try NetlinkParser.parse(
      B.address(index: 3, [10, 0, 0, 3], prefix: 8, flags: 0x240))
    guard case .newAddress(let address) = messages.first?.payload else {
      Issue.record("no address")
      return
    }
    #expect(address.flags == 0x240)
  }

  @Test("multipath next hops carry their own flags")
  func multipath() throws {
    let messages = try NetlinkParser.parse(
      B.defaultRoute(interface: 0, multipath: [(2, 0), (3, UInt8(RT.nextHopLinkDown))]))
    guard case .newRoute(let route) = messages.first?.payload else {
      Issue.record("no route")
      return
    }
    #expect(route.nextHops == [NextHop(index: 2, flags: 0), NextHop(index: 3, flags: 0x10)])
  }

  @Test("an error message carries the errno, an unknown type is kept as other")
  func errorAndOther() throws {
    let datagram =
      B.message(type: RT.error, body: B.i32(-16) + [UInt8](repeating: 0, count: 16))
      + B.message(type: 99, body: [1, 2, 3])
    #expect(try NetlinkParser.parse(datagram).map(\.payload) == [.error(-16), .other(99)])
  }

  @Test("an empty datagram holds no message")
  func empty() throws {
    #expect(try NetlinkParser.parse([]).isEmpty)
  }

  @Test("malformed datagrams throw an error that says where", arguments: malformedCases)
  func malformed(_ example: Malformed) {
    #expect(throws: example.expected, "\(example.name)") { try NetlinkParser.parse(example.bytes) }
  }

  @Test("every truncation and every single-byte corruption of a valid dump fails safely")
  func exhaustive() {
    let datagram =
      B.link(index: 2, name: "eth0", flags: B.upRunning, kind: "wireguard")
      + B.address(
        index: 2, [0x20, 1, 0xd, 0xb8] + [UInt8](repeating: 0, count: 11) + [2], prefix: 64)
      + B.defaultRoute(interface: 0, multipath: [(2, 0), (3, 0)])
    var outcomes = (parsed: 0, rejected: 0)
    for length in 0...datagram.count {
      if (try? NetlinkParser.parse(Array(datagram.prefix(length)))) != nil {
        outcomes.parsed += 1
      } else {
        outcomes.rejected += 1
      }
    }
    for index in datagram.indices {
      for value: UInt8 in [0, 1, 3, 0x7F, 0xFF] {
        var corrupted = datagram
        corrupted[index] = value
        if (try? NetlinkParser.parse(corrupted)) != nil {
          outcomes.parsed += 1
        } else {
          outcomes.rejected += 1
        }
      }
    }
    // Only the whole datagram, its message boundaries and harmless corruptions parse.
    #expect(outcomes.rejected > datagram.count)
    #expect(outcomes.parsed > 0)
  }

  @Test("random bytes never crash the parser")
  func random() {
    // A trap stops the run with no message: the seed is fixed, so the run replays as it is.
    var generator = SplitMix64(testSeed: 0x5EED)
    var parsed = 0
    for _ in 0..<20_000 {
      let count = Int(generator.next() % 200)
      var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      if count >= 4 && generator.next() % 2 == 0 {
        // A plausible length makes the parser go deeper.
        bytes.replaceSubrange(0..<4, with: B.u32(UInt32(count)))
      }
      if (try? NetlinkParser.parse(bytes)) != nil { parsed += 1 }
    }
    // Reaching here without trapping is the point; the empty inputs at least parse.
    #expect(parsed > 0, "\(generator.seedDescription)")
  }
}
