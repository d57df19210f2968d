import CourierDomain
import Foundation
import Testing

@Suite("PathReport")
struct PathReportTests {
  static let eth0 = NetworkInterface(
    name: "eth0", kind: "ethernet", isUsable: true, addresses: ["10.0.0.2/24", "2001:db8::2/64"],
    hasDefaultRoute: true)
  static let wwan0 = NetworkInterface(
    name: "wwan0", kind: "wwan", isUsable: false, isExpensive: true)
  static let wlan0 = NetworkInterface(name: "wlan0", kind: "wifi", isUsable: true)

  @Test(
    "RFC 3339 in UTC with milliseconds",
    arguments: [
      (0.0, "1970-01-01T00:00:00.000Z"),
      (1_796_033_700.123, "2026-11-30T10:15:00.123Z"),
      (951_868_799.999, "2000-02-29T23:59:59.999Z"),
      (-0.5, "1969-12-31T23:59:59.500Z"),
      (4_102_444_800.0, "2100-01-01T00:00:00.000Z"),
    ])
  func rfc3339(seconds: Double, expected: String) {
    #expect(PathReport.rfc3339(Date(timeIntervalSince1970: seconds)) == expected)
  }

  @Test("the JSON object has the fixed keys in order")
  func json() {
    let path = NetworkPath(
      status: .satisfied, isExpensive: false, generation: 3, interfaces: [Self.eth0])
    let text = PathReport.json(path, at: Date(timeIntervalSince1970: 1_796_033_700.123))
    #expect(
      text
        == #"{"at":"2026-11-30T10:15:00.123Z","generation":3,"status":"satisfied","#
        + #""expensive":false,"constrained":false,"#
        + #""sources":{"status":"none","expensive":"none","constrained":"none"},"#
        + #""os":{"service":"off"},"interfaces":[{"name":"eth0","kind":"ethernet","#
        + #""usable":true,"addresses":["10.0.0.2/24","2001:db8::2/64"],"default_route":true,"#
        + #""expensive":false}]}"#)
  }

  @Test("the JSON parses back and escapes odd names")
  func jsonEscapes() throws {
    let odd = NetworkInterface(name: "we\"ird\n\u{1}", kind: "other", isUsable: false)
    let text = PathReport.json(
      NetworkPath(status: .requiresConnection, interfaces: [odd]),
      at: Date(timeIntervalSince1970: 0))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(object["status"] as? String == "requiresConnection")
    let interfaces = try #require(object["interfaces"] as? [[String: Any]])
    #expect(interfaces.first?["name"] as? String == "we\"ird\n\u{1}")
  }

  @Test(
    "one line says why",
    arguments: [
      (NetworkPath.unknown, "unknown: nothing heard from the path monitor yet"),
      (
        NetworkPath(status: .satisfied, isExpensive: true, interfaces: [eth0, wwan0]),
        "satisfied via eth0 (10.0.0.2/24, 2001:db8::2/64), expensive"
      ),
      (
        NetworkPath(status: .unsatisfied, interfaces: [wwan0, wlan0]),
        "unsatisfied: wwan0 is down or has no carrier; wlan0 has no usable address"
      ),
      (NetworkPath(status: .unsatisfied), "unsatisfied: no network interface"),
      (
        NetworkPath(status: .captivePortal, isExpensive: true),
        "captivePortal: a login page answers in the server's place, expensive"
      ),
    ])
  func summary(path: NetworkPath, expected: String) {
    #expect(PathReport.summary(path) == expected)
  }

  @Test("several lines list every interface")
  func details() {
    let path = NetworkPath(status: .satisfied, generation: 2, interfaces: [Self.eth0, Self.wwan0])
    #expect(
      PathReport.details(path) == """
        status: satisfied (generation 2)
        expensive: no, constrained: no (Linux cannot tell; no constrained_interfaces configured)
        eth0 (ethernet): up, addresses 10.0.0.2/24, 2001:db8::2/64, default route
        wwan0 (wwan, expensive): down, addresses none, no default route: is down or has no carrier
        """)
  }
}
