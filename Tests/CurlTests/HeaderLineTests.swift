import Testing

@testable import CourierCurl

/// Response head lines as libcurl hands them to the header callback, CRLF included.
@Suite("CurlEasy.headerLine")
struct HeaderLineTests {
  static let rows: [(String, CurlEasy.HeaderLine)] = [
    ("HTTP/1.1 200 OK\r\n", .status(code: 200)),
    ("HTTP/2 304\r\n", .status(code: 304)),
    // libcurl's line for an HTTP/2 head ends with a space.
    ("HTTP/2 200 \r\n", .status(code: 200)),
    // The reason phrase may be empty, or not there (RFC 9112 §4).
    ("HTTP/1.1 204 \r\n", .status(code: 204)),
    ("HTTP/1.1 204\r\n", .status(code: 204)),
    ("HTTP/1.0 503 Service Unavailable\n", .status(code: 503)),
    ("HTTP/1.1 099 Odd\r\n", .status(code: 99)),
    // The HTTP-name is case-sensitive (RFC 9112 §2.3); one space, three digits.
    ("Http/1.1 200 OK\r\n", .other),
    ("http/1.1 200 OK\r\n", .other),
    ("HTTP/1.1  200 OK\r\n", .other),
    ("HTTP/1.1 20 OK\r\n", .other),
    ("HTTP/1.1 2000 OK\r\n", .other),
    ("HTTP/1.1 200OK\r\n", .other),
    ("HTTP/1.1\t200 OK\r\n", .other),
    ("HTTP/11 200 OK\r\n", .other),
    ("HTTP/1. 200 OK\r\n", .other),
    ("HTTP/ 200 OK\r\n", .other),
    ("Content-Type: application/json\r\n", .field(name: "Content-Type", value: "application/json")),
    ("ETag:\"v1\"\r\n", .field(name: "ETag", value: "\"v1\"")),
    ("Retry-After: \t 5 \t\r\n", .field(name: "Retry-After", value: "5")),
    ("X-Empty:\r\n", .field(name: "X-Empty", value: "")),
    // Found by scripts/fuzz (header-line): a bare CR before the line end stayed in the value.
    ("Retry-After: \t 5 \t\t\r\t\r\n", .field(name: "Retry-After", value: "5")),
    ("Location: /a:b?c=d\r\n", .field(name: "Location", value: "/a:b?c=d")),
    ("X-Name : v\n", .field(name: "X-Name", value: "v")),
    ("X-Ünïcode: café ✓\r\n", .field(name: "X-Ünïcode", value: "café ✓")),
    ("\r\n", .end),
    ("\n", .end),
    ("", .other),
    (" folded continuation: x\r\n", .other),
    ("no colon here\r\n", .other),
    ("HTTP\r\n", .other),
  ]

  @Test(
    "status lines as RFC 9112 spells them, fields trimmed, the end of a head, the rest",
    arguments: rows)
  func parses(_ row: (String, CurlEasy.HeaderLine)) {
    let bytes = Array(row.0.utf8)
    let line = bytes.withUnsafeBytes { CurlEasy.headerLine($0) }
    #expect(line == row.1)
  }
}
