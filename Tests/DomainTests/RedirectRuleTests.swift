import CourierDomain
import Foundation
import HTTPTypes
import Testing

/// Which redirects are followed, with which method and body.
@Suite("RedirectRule")
struct RedirectRuleTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let method: HTTPRequest.Method
    let status: Int
    let location: String?
    let expected: (method: String, url: String, keepsBody: Bool)?
    var testDescription: String { "\(method) \(status) → \(location ?? "nil")" }
  }

  static let base = URL(string: "http://127.0.0.1:8080/a/b?q=1") ?? URL(fileURLWithPath: "/")

  static let rows: [Row] = [
    Row(
      method: .get, status: 302, location: "/health",
      expected: ("GET", "http://127.0.0.1:8080/health", true)),
    Row(
      method: .get, status: 301, location: "c", expected: ("GET", "http://127.0.0.1:8080/a/c", true)
    ),
    Row(
      method: .post, status: 301, location: "/x",
      expected: ("GET", "http://127.0.0.1:8080/x", false)),
    Row(
      method: .post, status: 302, location: "/x",
      expected: ("GET", "http://127.0.0.1:8080/x", false)),
    Row(
      method: .put, status: 302, location: "/x", expected: ("PUT", "http://127.0.0.1:8080/x", true)),
    Row(
      method: .post, status: 303, location: "/x",
      expected: ("GET", "http://127.0.0.1:8080/x", false)),
    Row(
      method: .delete, status: 303, location: "/x",
      expected: ("GET", "http://127.0.0.1:8080/x", false)),
    Row(
      method: .head, status: 303, location: "/x",
      expected: ("HEAD", "http://127.0.0.1:8080/x", true)),
    Row(
      method: .post, status: 307, location: "/x",
      expected: ("POST", "http://127.0.0.1:8080/x", true)),
    Row(
      method: .patch, status: 308, location: "/x",
      expected: ("PATCH", "http://127.0.0.1:8080/x", true)),
    Row(
      method: .get, status: 307, location: "http://127.0.0.1:8080/abs",
      expected: ("GET", "http://127.0.0.1:8080/abs", true)),
    Row(
      method: .get, status: 302, location: "HTTP://127.0.0.1:8080/case",
      expected: ("GET", "HTTP://127.0.0.1:8080/case", true)),
    // Not followed: another host, port or scheme; no location; not a redirect status.
    Row(method: .get, status: 302, location: "http://localhost:8080/x", expected: nil),
    Row(method: .get, status: 302, location: "http://127.0.0.1:8081/x", expected: nil),
    Row(method: .get, status: 302, location: "https://127.0.0.1:8080/x", expected: nil),
    Row(method: .get, status: 302, location: "//evil.example/x", expected: nil),
    Row(method: .get, status: 302, location: "ftp://127.0.0.1:8080/x", expected: nil),
    Row(method: .get, status: 302, location: nil, expected: nil),
    Row(method: .get, status: 302, location: "  ", expected: nil),
    Row(method: .get, status: 300, location: "/x", expected: nil),
    Row(method: .get, status: 304, location: "/x", expected: nil),
    Row(method: .get, status: 200, location: "/x", expected: nil),
  ]

  @Test("method, URL and body after each redirect", arguments: rows)
  func decides(_ row: Row) {
    let step = RedirectRule.next(
      method: row.method, url: Self.base, status: row.status, location: row.location, hops: 0)
    #expect(step?.method.rawValue == row.expected?.method)
    #expect(step?.url.absoluteString == row.expected?.url)
    #expect(step?.keepsBody == row.expected?.keepsBody)
  }

  @Test("a chain stops after maxHops, returning the last redirect as the answer")
  func bounded() {
    let last = RedirectRule.maxHops - 1
    #expect(
      RedirectRule.next(method: .get, url: Self.base, status: 302, location: "/x", hops: last)
        != nil)
    #expect(
      RedirectRule.next(
        method: .get, url: Self.base, status: 302, location: "/x", hops: RedirectRule.maxHops)
        == nil)
  }

  @Test("origins compare scheme, host and port, with default ports filled in")
  func origins() throws {
    func url(_ text: String) throws -> URL { try #require(URL(string: text)) }
    #expect(try RedirectRule.sameOrigin(url("http://h/a"), url("http://h:80/b")))
    #expect(try RedirectRule.sameOrigin(url("https://H/a"), url("https://h:443/b")))
    #expect(try !RedirectRule.sameOrigin(url("http://h/a"), url("https://h/a")))
    #expect(try !RedirectRule.sameOrigin(url("http://h:1/a"), url("http://h:2/a")))
    #expect(try !RedirectRule.sameOrigin(url("file:///a"), url("file:///a")))
  }
}
