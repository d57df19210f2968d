import CourierDomain
import Foundation
import HTTPTypes
import Testing

/// What Courier reads off an `HTTPRequest`: whether it may be repeated, its line for logs, and
/// a URL refused where swift-http-types would stop the process (decision 2201).
@Suite("HTTPRequest in Courier")
struct HTTPRequestCourierTests {
  @Test(
    "idempotent methods, RFC 9110",
    arguments: [
      ("GET", true), ("HEAD", true), ("PUT", true), ("DELETE", true), ("OPTIONS", true),
      ("TRACE", true), ("POST", false), ("PATCH", false), ("CONNECT", false), ("PURGE", false),
    ])
  func idempotent(_ token: String, _ expected: Bool) throws {
    #expect(try #require(HTTPRequest.Method(token)).isIdempotent == expected)
  }

  @Test("safe to repeat: an idempotent method, or a POST with an Idempotency-Key")
  func safeToRepeat() throws {
    let url = try #require(URL(string: "http://h/x"))
    #expect(HTTPRequest(method: .put, url: url).isSafeToRepeat)
    #expect(!HTTPRequest(method: .post, url: url).isSafeToRepeat)
    #expect(
      HTTPRequest(method: .post, url: url, headerFields: [.idempotencyKey: "k"]).isSafeToRepeat)
  }

  @Test(
    "the summary is method and path, never the query or the credentials",
    arguments: [
      ("http://h", "GET /"), ("http://h/", "GET /"), ("http://h/a/b", "GET /a/b"),
      ("http://u:p@h:8080/a?token=secret#f", "GET /a"), ("http://h/a%2Fb", "GET /a%2Fb"),
      ("http://h?x=1", "GET /"),
    ])
  func summary(_ text: String, _ expected: String) throws {
    let request = HTTPRequest(method: .get, url: try #require(URL(string: text)))
    #expect(request.summary == expected)
  }

  @Test("a URL without a scheme is refused, not a trap")
  func relativeURL() throws {
    for text in ["relative/path", "/absolute/path", "//host/path"] {
      let url = try #require(URL(string: text))
      let error = #expect(throws: CourierError.self) {
        try HTTPRequest(checking: url, method: .get)
      }
      #expect(error?.kind == .invalidInput, "\(text)")
    }
    let good = try HTTPRequest(
      checking: try #require(URL(string: "https://h:8443/a?b=c")), method: .post)
    #expect(good.scheme == "https")
    #expect(good.authority == "h:8443")
    #expect(good.path == "/a?b=c")
    // An IPv6 host keeps its brackets: the adapters put scheme, authority and path together.
    let literal = try HTTPRequest(
      checking: try #require(URL(string: "http://[::1]:8080/x")), method: .get)
    #expect(literal.authority == "[::1]:8080")
    #expect(literal.url?.absoluteString == "http://[::1]:8080/x")
  }
}
