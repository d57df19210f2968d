import CourierDomain
import Foundation
import Testing

/// Which hosts count as loopback for credentials over plain http (decision 2431): a table.
@Suite("InsecureHTTP")
struct InsecureHTTPTests {
  @Test(
    "loopback: 127.0.0.0/8, ::1 in any spelling, localhost",
    arguments: [
      "127.0.0.1", "127.0.0.53", "127.255.255.254", "localhost", "LocalHost", "localhost.",
      "::1", "[::1]", "0:0:0:0:0:0:0:1", "0000::0001", "::ffff:127.0.0.1", "[::1%lo]",
    ])
  func loopback(_ host: String) {
    #expect(InsecureHTTP.isLoopback(host: host))
  }

  @Test(
    "not loopback: other addresses, names that only look like it, shorthand forms",
    arguments: [
      "192.0.2.1", "10.0.0.1", "128.0.0.1", "0.0.0.0", "::", "::2", "::ffff:10.0.0.1",
      "127.0.0.1.example.com", "localhost.example.com", "example.com", "127.1", "0177.0.0.1",
      "127.0.0.256", "1:2:3:4:5:6:7:8:9", ":::1", "", "api.localhost",
    ])
  func notLoopback(_ host: String) {
    #expect(!InsecureHTTP.isLoopback(host: host))
  }

  @Test("https goes anywhere; http off loopback only when allowed")
  func rule() throws {
    let remote = try #require(URL(string: "http://192.0.2.1:8080/auth/token"))
    #expect(!InsecureHTTP.mayCarryCredentials(remote, allowed: false))
    #expect(InsecureHTTP.mayCarryCredentials(remote, allowed: true))
    let secure = try #require(URL(string: "HTTPS://192.0.2.1/auth/token"))
    #expect(InsecureHTTP.mayCarryCredentials(secure, allowed: false))
    let local = try #require(URL(string: "http://[::1]:8080/auth/token"))
    #expect(InsecureHTTP.mayCarryCredentials(local, allowed: false))
    #expect(throws: CourierError.self) { try InsecureHTTP.check(remote, allowed: false) }
  }
}
