import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// The session never goes over plain `http://` to a host that is not loopback unless the
/// configuration allows it (decision 2431): refused before anything is sent, the token added,
/// or the refresh token used.
@Suite("AuthTransport over plain http")
struct AuthTransportInsecureHTTPTests {
  /// An address of TEST-NET-1 (RFC 5737): routed nowhere, so a request that went out would
  /// hang until its deadline rather than fail at once.
  static let remote = URL(fileURLWithPath: "/").testURL("http://192.0.2.1/photos")

  func auth(
    _ transport: InMemoryTransport, origin: URL, credentials: Credentials?,
    allowsInsecureHTTP: Bool = false
  ) -> AuthTransport {
    let store = InMemoryCredentialStore(credentials)
    let refresh = URL(string: "/auth/refresh", relativeTo: origin)?.absoluteURL ?? origin
    return AuthTransport(
      transport,
      authenticator: RefreshTokenAuthenticator(store: store, refreshURL: refresh),
      credentialOrigin: origin, allowsInsecureHTTP: allowsInsecureHTTP)
  }

  @Test(
    "a token is not sent to http:// off loopback: refused before any request, naming the setting")
  func refusedOffLoopback() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let auth = auth(transport, origin: Self.remote, credentials: Credentials(accessToken: "t1"))
    let error = try await #require(throws: CourierError.self) {
      _ = try await auth.send(HTTPRequest(method: .get, url: Self.remote))
    }
    #expect(error.kind == .invalidInput)
    #expect(error.code == "insecure_http")
    #expect(!error.isTransient)
    #expect(error.userMessage.contains("allow_insecure_http"))
    #expect(error.userMessage.contains("192.0.2.1"))
    #expect(transport.requests.isEmpty)
  }

  @Test("a token about to expire is not renewed over http:// off loopback either")
  func noRefreshOffLoopback() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: #"{"access_token":"new","refresh_token":"r2"}"#)
    let expired = Credentials(
      accessToken: "t1", refreshToken: "r1", expiresAt: Date(timeIntervalSinceNow: -60))
    let auth = auth(transport, origin: Self.remote, credentials: expired)
    await #expect(throws: CourierError.self) {
      _ = try await auth.send(HTTPRequest(method: .get, url: Self.remote))
    }
    #expect(transport.requests.isEmpty)
  }

  @Test("allow_insecure_http lets the token go to http:// off loopback")
  func allowed() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let auth = auth(
      transport, origin: Self.remote, credentials: Credentials(accessToken: "t1"),
      allowsInsecureHTTP: true)
    let (response, _) = try await auth.send(HTTPRequest(method: .get, url: Self.remote))
    #expect(response.status == 200)
    #expect(transport.requests.first?.headerFields[.authorization] == "Bearer t1")
  }

  @Test(
    "loopback over http and any host over https get the token",
    arguments: [
      "http://127.0.0.1:9/p", "http://127.8.9.10/p", "http://localhost:8080/p",
      "http://LOCALHOST./p", "http://[::1]:8080/p", "https://192.0.2.1/p",
      "https://example.com/p",
    ])
  func loopbackAndHTTPS(_ address: String) async throws {
    let url = URL(fileURLWithPath: "/").testURL(address)
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let auth = auth(transport, origin: url, credentials: Credentials(accessToken: "t1"))
    _ = try await auth.send(HTTPRequest(method: .get, url: url))
    #expect(transport.requests.first?.headerFields[.authorization] == "Bearer t1")
  }

  @Test("without a session nothing secret goes out: the request is sent as it is")
  func noSession() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let auth = auth(transport, origin: Self.remote, credentials: nil)
    let (response, _) = try await auth.send(HTTPRequest(method: .get, url: Self.remote))
    #expect(response.status == 200)
    #expect(transport.requests.first?.headerFields[.authorization] == nil)
  }
}
