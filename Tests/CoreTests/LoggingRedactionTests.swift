import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

/// `--verbose` lines: no credentials, one line each, whoever supplied the text.
@Suite("LoggingTransport redaction")
struct LoggingRedactionTests {
  @Test("user:password@, credential headers and credential query values are redacted")
  func redacts() throws {
    let url = try #require(
      URL(string: "https://alice:pa55word@example.com:8443/a/b?access_token=t0k&page=2&api_key=k3y")
    )
    let request = HTTPRequest(
      method: .get, url: url,
      headerFields: [
        .authorization: "Bearer abc", .cookie: "sid=c00kie", .named("X-Auth-Token"): "xt0k",
        .named("X-Api-Key"): "ap1", .proxyAuthorization: "Basic zzz", .accept: "application/json",
      ])
    let line = LoggingTransport.line(for: request)
    for secret in ["pa55word", "alice", "t0k", "k3y", "abc", "c00kie", "xt0k", "ap1", "zzz"] {
      #expect(!line.contains(secret), "\(secret) in \(line)")
    }
    // `HTTPRequest` keeps no `user:password@` (its authority is host and port): none to log.
    #expect(line.contains("https://example.com:8443/a/b?"), "\(line)")
    #expect(line.contains("page=2"))
    #expect(line.contains("Accept: application/json"))
  }

  @Test("control characters in anything logged are escaped: one line, no terminal escapes")
  func escapes() async throws {
    let (logger, log) = Logger.recording()
    let base = InMemoryTransport()
    base.enqueue(
      .failure(
        CourierError(
          .server, serverMessage: "bad\r\nInjected: line \u{1B}[2J\u{9B}31m",
          underlying: "reason\nsecond")))
    let logging = LoggingTransport(base)
    let request = HTTPRequest(
      method: .get, url: try #require(URL(string: "http://h/x")),
      headerFields: [.named("X-Note"): "a\r\nb\u{1B}c\u{7F}"])
    await #expect(throws: CourierError.self) {
      _ = try await logging.send(request, options: TransportOptions(logger: logger))
    }
    let logged = log.entries.map(\.text)
    #expect(logged.count == 2)
    for line in logged {
      #expect(
        !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) },
        "\(line.debugDescription)")
    }
    // `HTTPFields` made each control character of the value a space when it was set (decision
    // 2201): the line shows what is sent.
    #expect(logged.first?.contains("X-Note: a  b c") == true, "\(logged)")
  }

  @Test("LogText escapes C0, C1, DEL and bidi controls, and leaves the rest alone")
  func logText() {
    #expect(LogText.escaped("plain é ✓") == "plain é ✓")
    #expect(LogText.escaped("a\rb\nc\td\u{1B}e") == #"a\rb\nc\td\ee"#)
    #expect(LogText.escaped("\u{0}\u{7F}\u{85}\u{9B}") == #"\x00\x7F\x85\x9B"#)
    #expect(LogText.escaped("x\u{202E}y\u{2028}") == #"x\u{202E}y\u{2028}"#)
  }

  @Test("header values: CR, LF, NUL and other controls are refused; tab is fine")
  func headerValues() {
    #expect(HeaderFieldCheck.isValidValue("text/plain; q=0.5\tx"))
    for bad in ["a\rb", "a\nb", "a\u{0}b", "a\u{1B}b", "a\u{7F}"] {
      #expect(!HeaderFieldCheck.isValidValue(bad), "\(bad.debugDescription)")
    }
    #expect(HeaderFieldCheck.isValidCredential("eyJhbGciOi.J9-_~+/="))
    for bad in ["", "a b", "a\r\n", "tökén", "a\tb"] {
      #expect(!HeaderFieldCheck.isValidCredential(bad), "\(bad.debugDescription)")
    }
  }

  @Test("a token reply with CR/LF in the token is refused before it is saved")
  func tokenReply() {
    let body = Data(#"{"access_token":"a\r\nb","refresh_token":"r","expires_in":60}"#.utf8)
    #expect(throws: CourierError.self) {
      _ = try TokenResponse.credentials(from: body, now: Date())
    }
    let huge = Data(#"{"access_token":"ok","expires_in":1e308}"#.utf8)
    #expect((try? TokenResponse.credentials(from: huge, now: Date()))?.expiresAt == nil)
  }
}
