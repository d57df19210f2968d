import Foundation
import HTTPTypes

/// One way a network or a server can misbehave, for the hostile-server suite: each mode is a
/// `LoopbackServer` answering every request the same wrong way.
public enum HostileMode: String, CaseIterable, Sendable, CustomStringConvertible {
  /// A Wi-Fi login page answering `200 text/html` to every request.
  case portal200
  /// A portal redirecting every request to its login page on another host.
  case portal302
  /// RFC 6585's "network authentication required".
  case portal511
  /// A proxy's HTML refusal, without the server's error body.
  case proxy403
  /// A 2xx with JSON that is not the record (`{"ok":true}`).
  case jsonNotRecord
  /// A `Content-Length` shorter than the body: the reply is cut mid-JSON.
  case lyingLength
  /// A `Content-Length` of 1000 and 10 bytes, then the connection closes.
  case truncatedBody
  /// Bytes that are not HTTP.
  case notHTTP
  /// A 200 `{"ok":true}` sent chunked, with a trailer field after the body (RFC 9112 §7.1.2):
  /// kept apart from the header fields, and no transport stops the process on it.
  case chunkedTrailers
  /// A 200 whose status line spells the HTTP-version `Http/1.1`: the name is case-sensitive
  /// (RFC 9112 §2.3), so it is not HTTP.
  case badStatusLine
  /// A 200 `{"ok":true}` whose status line ends at its code (`HTTP/1.1 200`, no reason phrase):
  /// a reply like any other.
  case bareStatusLine
  /// A 200 with two different `Content-Length` fields, the last one the body's (the one
  /// libcurl alone would go by): which body is the reply is unknown (RFC 9112 §6.3).
  case conflictingLength
  /// Reads the request and never answers.
  case slowHeaders
  /// A 200 whose header section is 512 KiB long.
  case hugeHeaders
  /// `Content-Encoding: gzip` that inflates to 96 MiB of zeros (past the 64 MiB body limit).
  case gzipBomb
  /// 401 to everything, token refreshes included.
  case endless401
  /// 429 with `Retry-After: 1` to everything.
  case endless429
  /// A 200 with a header field whose name is not a token (`Bad Name: x`), which
  /// `HTTPFields` cannot hold.
  case badFieldName
  /// A 200 with 65,535 header fields, one more than `HTTPFields` holds (which would stop the
  /// process rather than take another).
  case manyFields
  /// A 400 whose message repeats the request's head, its `Authorization` field with the
  /// bearer token among it (decision 2421): the token must reach no screen and no file.
  case tokenEcho
  /// A 200 list of one article whose id and title carry terminal controls (a screen clear, an
  /// OSC window title ended by BEL, a CR that overwrites the line, U+202E): they must reach a
  /// terminal only as visible escapes (decision 2420).
  case terminalInjection
  /// A 200 list of one article with a member nested 100,000 levels deep, past what Courier
  /// reads (decision 2428), typed `text/plain`: refused by name (the record and the field), a
  /// bad reply (76) and never a page, whatever else the reply is answering.
  case tooDeep

  /// The mode's name.
  public var description: String { rawValue }

  static let loginPage =
    "<!DOCTYPE html><html><head><title>Hotel Wi-Fi</title></head><body>"
    + "<h1>Please log in to the network</h1><form action=\"/login\"></form></body></html>"

  /// A raw HTTP/1.1 response that closes the connection.
  /// - Parameters:
  ///   - status: the status line's code and reason.
  ///   - type: the `Content-Type`.
  ///   - body: the body.
  ///   - extra: more header lines.
  /// - Returns: the response's text.
  public static func response(
    _ status: String, type: String, body: String, extra: [String] = []
  ) -> String {
    let head =
      ["HTTP/1.1 \(status)", "Content-Type: \(type)", "Content-Length: \(body.utf8.count)"]
      + extra + ["Connection: close"]
    return head.joined(separator: "\r\n") + "\r\n\r\n" + body
  }

  /// The token every request of the hostile suites carries (`COURIER_TOKEN`).
  public static let token = "hostile-test-token-4f1c2a"

  /// The id and title `terminalInjection` lists, as JSON escapes (the body itself is ASCII).
  static let injectedID = #"evil\u001b[2J"#
  static let injectedTitle = #"\u001b]0;owned\u0007Safe\rForged \u202Etxt.exe\u009b31m"#

  /// The id of the article `tooDeep` lists.
  public static let deepID = "deep-1"
  /// The member of that article nested past the limit.
  public static let deepField = "meta"

  /// Whether the mode's answer is the server's own refusal of the writes (a 400 with the API's
  /// error body), recorded against each, rather than a reply that keeps them pending.
  public var refusesWrites: Bool { self == .tokenEcho }

  /// The API's error body for a 400 that repeats the request it refuses, its lines joined,
  /// its credentials and its body first (a message is cut at 300 characters).
  /// - Parameter request: the request as sent.
  /// - Returns: the JSON body.
  public static func echo(_ request: String) -> String {
    let parts = request.components(separatedBy: "\r\n\r\n")
    let lines = (parts.first ?? "").components(separatedBy: "\r\n")
    let credentials = lines.filter { $0.lowercased().hasPrefix("authorization:") }
    let body = parts.dropFirst().joined(separator: "\r\n\r\n")
    let message =
      "Bad request. You sent: " + (credentials + [body] + lines).joined(separator: " | ")
    let object: [String: String] = ["code": "bad_request", "message": message]
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }

  /// How the loopback server answers in this mode.
  /// - Returns: the behaviour.
  public func behaviour() -> LoopbackServer.Behaviour {
    switch self {
    case .portal200:
      return .raw(Self.response("200 OK", type: "text/html", body: Self.loginPage))
    case .portal302:
      return .raw(
        Self.response(
          "302 Found", type: "text/html", body: Self.loginPage,
          extra: ["Location: http://portal.example/login?continue=1"]))
    case .portal511:
      return .raw(
        Self.response(
          "511 Network Authentication Required", type: "text/html", body: Self.loginPage))
    case .proxy403:
      return .raw(
        Self.response(
          "403 Forbidden", type: "text/html", body: "<html><body>Blocked by proxy</body></html>"))
    case .jsonNotRecord:
      return .raw(Self.response("200 OK", type: "application/json", body: #"{"ok":true}"#))
    case .lyingLength:
      let body = #"{"id":"x","title":"t","body":"","version":1}"#
      return .raw(
        "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 9\r\n"
          + "Connection: close\r\n\r\n" + body)
    case .truncatedBody:
      return .closeMidBody
    case .notHTTP:
      return .garbage
    case .chunkedTrailers:
      let body = #"{"ok":true}"#
      return .raw(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
          + "Trailer: X-Checksum\r\nConnection: close\r\n\r\n"
          + "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\nX-Checksum: abc\r\n\r\n")
    case .badStatusLine:
      return .raw(
        "Http/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
          + "Connection: close\r\n\r\n{\"ok\":true}")
    case .bareStatusLine:
      return .raw(
        "HTTP/1.1 200\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
          + "Connection: close\r\n\r\n{\"ok\":true}")
    case .conflictingLength:
      return .raw(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n"
          + "Content-Length: 11\r\nConnection: close\r\n\r\n{\"ok\":true}")
    case .slowHeaders:
      return .hang
    case .hugeHeaders:
      let filler = (0..<512).map { "X-Filler-\($0): " + String(repeating: "a", count: 1000) }
      return .raw(
        Self.response("200 OK", type: "application/json", body: "{}", extra: filler))
    case .gzipBomb:
      return .bytes(GzipBomb.response(mebibytes: 96))
    case .endless401:
      return .raw(
        Self.response(
          "401 Unauthorized", type: "application/json",
          body: #"{"code":"unauthorized","message":"Token expired"}"#,
          extra: [#"WWW-Authenticate: Bearer error="invalid_token""#]))
    case .endless429:
      return .raw(
        Self.response(
          "429 Too Many Requests", type: "application/json",
          body: #"{"code":"rate_limited","message":"Slow down"}"#, extra: ["Retry-After: 1"]))
    case .badFieldName:
      return .raw(
        Self.response("200 OK", type: "application/json", body: "{}", extra: ["Bad Name: x"]))
    case .manyFields:
      return .raw(
        Self.response(
          "200 OK", type: "application/json", body: "{}",
          extra: Array(repeating: "a:", count: 65_535)))
    case .tokenEcho:
      return .echo { request in
        Self.response("400 Bad Request", type: "application/json", body: Self.echo(request))
      }
    case .terminalInjection:
      let article =
        #"{"id":"\#(Self.injectedID)","title":"\#(Self.injectedTitle)","body":"b","#
        + #""version":1,"updated_at":"2026-01-01T00:00:00.000Z"}"#
      return .raw(Self.response("200 OK", type: "application/json", body: "[\(article)]"))
    case .tooDeep:
      let levels = 100_000
      let article =
        #"{"id":"\#(Self.deepID)","title":"Deep","body":"b","version":1,"\#(Self.deepField)":"#
        + String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels) + "}"
      return .raw(
        Self.response("200 OK", type: "text/plain; charset=utf-8", body: "[\(article)]"))
    }
  }

  /// Starts a loopback server in this mode; the caller stops it.
  /// - Returns: the server.
  /// - Throws: when it cannot be started.
  public func start() throws -> LoopbackServer { try LoopbackServer(behaviour()) }
}
