import CourierDomain
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("HTTPCacheRules")
struct HTTPCacheRulesTests {
  static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

  /// Header fields from "Name: value" lines.
  static func fields(_ lines: [String]) -> HTTPFields {
    var fields = HTTPFields()
    for line in lines {
      let parts = line.split(separator: ":", maxSplits: 1)
      fields.append(
        HTTPField(
          name: .named(String(parts[0])),
          value: String(parts[1].drop { $0 == " " })))
    }
    return fields
  }

  static func get(_ lines: [String] = []) -> HTTPRequest {
    HTTPRequest(
      method: .get, scheme: "http", authority: "example.test", path: "/a",
      headerFields: fields(lines))
  }

  @Test(
    "a reply outlives a change of identity only when the server marked it public (decision 2505)",
    arguments: [
      ([String](), false),
      (["Cache-Control: public"], true),
      (["Cache-Control: max-age=60, PUBLIC"], true),
      (["Cache-Control: max-age=60", "Cache-Control: public"], true),
      (["Cache-Control: private"], false),
      (["Cache-Control: public, private"], false),
      (["Cache-Control: public, no-store"], false),
      (["Cache-Control: max-age=60"], false),
      (["Cache-Control: publicity"], false),
    ])
  func outlivesIdentity(lines: [String], expected: Bool) {
    #expect(HTTPCacheRules.outlivesIdentity(Self.fields(lines)) == expected)
  }

  @Test(
    "what may be stored: GET 200/203 without no-store or Vary: *",
    arguments: [
      ("GET", false, 200, [String](), [String](), true),
      ("GET", false, 203, [], [], true),
      ("GET", false, 200, [], ["Cache-Control: private, max-age=60"], true),
      ("GET", false, 200, [], ["Cache-Control: no-store"], false),
      ("GET", false, 200, [], ["Cache-Control: max-age=5, NO-STORE"], false),
      ("GET", false, 200, ["Cache-Control: no-store"], [], false),
      ("GET", false, 200, [], ["Vary: *"], false),
      ("GET", false, 200, [], ["Vary: Accept, *"], false),
      ("GET", false, 200, [], ["Vary: Accept-Language"], true),
      ("GET", true, 200, [], [], false),
      ("POST", false, 200, [], [], false),
      ("PUT", false, 200, [], [], false),
      ("GET", false, 204, [], [], false),
      ("GET", false, 206, [], [], false),
      ("GET", false, 301, [], [], false),
      ("GET", false, 404, [], [], false),
      ("GET", false, 500, [], [], false),
    ])
  func storable(
    method: String, hasBody: Bool, status: Int, request: [String], response: [String],
    expected: Bool
  ) throws {
    var sent = Self.get(request)
    sent.method = try #require(HTTPRequest.Method(method))
    let reply = HTTPResponse(status: .init(code: status), headerFields: Self.fields(response))
    #expect(HTTPCacheRules.isStorable(request: sent, hasBody: hasBody, response: reply) == expected)
  }

  @Test(
    "freshness: max-age, Expires minus Date, Age, no-cache on either side",
    arguments: [
      // (response fields, seconds since stored, request fields, fresh)
      (["Cache-Control: max-age=60"], 10.0, [String](), true),
      (["Cache-Control: max-age=60"], 60.0, [], false),
      (["Cache-Control: max-age=60", "Age: 55"], 10.0, [], false),
      (["Cache-Control: max-age=60", "Age: 40"], 10.0, [], true),
      (["Cache-Control: max-age=\"60\""], 10.0, [], true),
      (["Cache-Control: max-age=abc"], 0.0, [], false),
      (["Cache-Control: max-age=99999999999999999999999"], 1e6, [], true),
      (["Cache-Control: max-age=60, no-cache"], 1.0, [], false),
      (["Cache-Control: max-age=60"], 1.0, ["Cache-Control: no-cache"], false),
      (["Cache-Control: max-age=60"], 10.0, ["Cache-Control: max-age=5"], false),
      (["Cache-Control: max-age=60"], 1.0, ["Cache-Control: max-age=5"], true),
      // Expires 60 s after Date.
      (
        ["Date: Sun, 06 Nov 1994 08:49:37 GMT", "Expires: Sun, 06 Nov 1994 08:50:37 GMT"], 30.0,
        [], true
      ),
      (
        ["Date: Sun, 06 Nov 1994 08:49:37 GMT", "Expires: Sun, 06 Nov 1994 08:50:37 GMT"], 61.0,
        [], false
      ),
      // max-age wins over Expires.
      (
        [
          "Cache-Control: max-age=5", "Date: Sun, 06 Nov 1994 08:49:37 GMT",
          "Expires: Sun, 06 Nov 1994 09:49:37 GMT",
        ], 10.0, [], false
      ),
      (["Expires: 0"], 0.0, [], false),
      // No explicit freshness: revalidated every time (no heuristics).
      (["Last-Modified: Sun, 06 Nov 1994 08:00:00 GMT"], 0.0, [], false),
      ([], 0.0, [], false),
    ])
  func fresh(response: [String], elapsed: Double, request: [String], expected: Bool) {
    let storedAt = Self.now
    #expect(
      HTTPCacheRules.isFresh(
        Self.fields(response), storedAt: storedAt, request: Self.fields(request),
        now: storedAt.addingTimeInterval(elapsed)) == expected)
  }

  @Test("the current age adds the time stored to Age or the time since Date, whichever is more")
  func age() {
    let stored = Self.now
    let later = stored.addingTimeInterval(100)
    #expect(HTTPCacheRules.currentAge(Self.fields([]), storedAt: stored, now: later) == 100)
    #expect(
      HTTPCacheRules.currentAge(Self.fields(["Age: 30"]), storedAt: stored, now: later) == 130)
    // Date 20 s before it was received: 20 s old on arrival.
    #expect(
      HTTPCacheRules.currentAge(
        Self.fields(["Date: Sun, 06 Nov 1994 08:49:17 GMT"]), storedAt: stored, now: later) == 120)
    #expect(
      HTTPCacheRules.currentAge(
        Self.fields(["Date: Sun, 06 Nov 1994 08:49:17 GMT", "Age: 50"]), storedAt: stored,
        now: later) == 150)
    // A clock behind the server's gives no negative age.
    #expect(HTTPCacheRules.currentAge(Self.fields([]), storedAt: stored, now: Self.now - 10) == 0)
  }

  @Test(
    "Vary: the stored request's values must match the new request's",
    arguments: [
      // (reply Vary, stored request fields, new request fields, matches)
      (["Vary: Accept-Language"], ["Accept-Language: fr"], ["Accept-Language: fr"], true),
      (["Vary: Accept-Language"], ["Accept-Language: fr"], ["Accept-Language: de"], false),
      (["Vary: Accept-Language"], ["Accept-Language: fr"], [String](), false),
      (["Vary: Accept-Language"], [], [], true),
      (["Vary: accept-language"], ["Accept-Language: fr, de"], ["Accept-Language: fr,de"], true),
      (["Vary: Accept, Accept-Language"], ["Accept: a/b"], ["Accept: a/b"], true),
      (
        ["Vary: Accept", "Vary: X-Y"], ["Accept: a/b", "X-Y: 1"], ["Accept: a/b", "X-Y: 2"], false
      ),
      ([], ["Accept: a/b"], ["Accept: c/d"], true),
    ])
  func vary(reply: [String], stored: [String], request: [String], matches: Bool) throws {
    let names = try #require(HTTPCacheRules.varyNames(Self.fields(reply)))
    let values = HTTPCacheRules.varyValues(names, of: Self.fields(stored))
    #expect(HTTPCacheRules.varyMatches(values, request: Self.fields(request)) == matches)
  }

  @Test("Vary: * never matches: no names, so nothing is stored")
  func varyStar() {
    #expect(HTTPCacheRules.varyNames(Self.fields(["Vary: *"])) == nil)
    #expect(HTTPCacheRules.varyNames(Self.fields(["Vary: Accept", "Vary: *"])) == nil)
  }

  @Test("a 304 replaces the fields it names, never the stored body's framing")
  func notModifiedUpdate() {
    let stored = Self.fields([
      "ETag: \"1\"", "Cache-Control: max-age=5", "Content-Length: 120", "Content-Type: a/json",
    ])
    let update = Self.fields([
      "ETag: \"1\"", "Cache-Control: max-age=60", "Content-Length: 0", "Date: x",
    ])
    let merged = HTTPCacheRules.updated(stored, with: update)
    #expect(merged[.cacheControl] == "max-age=60")
    #expect(merged[.contentLength] == "120")
    #expect(merged[.contentType] == "a/json")
    #expect(merged[.date] == "x")
    #expect(merged[values: .eTag] == ["\"1\""])
  }
}
