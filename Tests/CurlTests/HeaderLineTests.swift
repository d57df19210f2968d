import Testing

@testable import CourierCurl

/// Response head lines as libcurl hands them to the header callback, CRLF included.
@Suite("CurlEasy.headerLine")
struct HeaderLineTests {
  static let rows: [(String, CurlEasy.HeaderLine)] = [
    ("HTTP/1.1 200 OK\r\n", .status),
    ("HTTP/2 304\r\n", .status),
    ("Content-Type: application/json\r\n", .field(name: "Content-Type", value: "application/json")),
    ("ETag:\"v1\"\r\n", .field(name: "ETag", value: "\"v1\"")),
    ("Retry-After: \t 5 \t\r\n", .field(name: "Retry-After", value: "5")),
    ("X-Empty:\r\n", .field(name: "X-Empty", value: "")),
    // Found by scripts/fuzz (header-line): a bare CR before the line end stayed in the value.
    ("Retry-After: \t 5 \t\t\r\t\r\n", .field(name: "Retry-After", value: "5")),
    ("Location: /a:b?c=d\r\n", .field(name: "Location", value: "/a:b?c=d")),
    ("X-Name : v\n", .field(name: "X-Name", value: "v")),
    ("X-Ünïcode: café ✓\r\n", .field(name: "X-Ünïcode", value: "café ✓")),
    ("\r\n", .other),
    ("", .other),
    (" folded continuation: x\r\n", .other),
    ("no colon here\r\n", .other),
    ("HTTP\r\n", .other),
  ]

  @Test("status lines, fields trimmed of spaces and tabs, and the rest", arguments: rows)
  func parses(_ row: (String, CurlEasy.HeaderLine)) {
    let bytes = Array(row.0.utf8)
    let line = bytes.withUnsafeBytes { CurlEasy.headerLine($0) }
    #expect(line == row.1)
  }
}
