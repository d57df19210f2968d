import CourierCore
import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import Testing

/// The bearer token reaches the base URL's origin only, and a damaged token is refused before
/// anything is sent (Docs/decisions/0005), over the real adapter.
@Suite("AuthTransport over CurlTransport: the token's origin")
struct CurlAuthOriginTests {
  @Test("the token goes to the base origin only, never to another host or port")
  func onlyToTheBaseOrigin() async throws {
    let base = try LoopbackServer(.raw(AuthOriginCheck.ok))
    let other = try LoopbackServer(.raw(AuthOriginCheck.ok))
    defer {
      base.stop()
      other.stop()
    }
    let auth = AuthTransport(
      CurlTransport(), store: InMemoryCredentialStore(Credentials(accessToken: "tok-123")),
      refreshURL: base.url.appendingPathComponent("auth/refresh"))
    let heads = try await AuthOriginCheck.run(base: base, other: other) {
      try await auth.send($0, options: TransportOptions())
    }
    #expect(heads.base.count == 2)
    #expect(heads.base.first?.contains("authorization: bearer tok-123") == true, "\(heads.base)")
    // "localhost" is another origin than "127.0.0.1", even on the same port.
    #expect(heads.base.last?.contains("authorization") == false, "\(heads.base)")
    #expect(heads.other.count == 1)
    #expect(heads.other.allSatisfy { !$0.contains("authorization") }, "\(heads.other)")
  }

  @Test("a token with CR/LF is refused before sending, with the session-damaged message")
  func damagedToken() async throws {
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let auth = AuthTransport(
      CurlTransport(), store: InMemoryCredentialStore(Credentials(accessToken: "tok\r\nX-Evil: 1")),
      refreshURL: server.url.appendingPathComponent("auth/refresh"))
    do {
      _ = try await auth.send(
        HTTPRequest(method: .get, url: server.url), options: TransportOptions())
      Issue.record("expected a refusal")
    } catch let error as CourierError {
      #expect(error.kind == .unauthorized)
      #expect(error.code == "damaged_session")
      #expect(error.userMessage == "The saved session is damaged. Please log in again.")
    }
    #expect(server.acceptedCount == 0)
  }
}
