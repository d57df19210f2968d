import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// A wall clock fixed at one instant.
struct FixedWallClock: WallClock {
  let instant: Date
  func now() -> Date { instant }
}

/// An authenticator that hands out scripted credentials and counts renewals, without a call.
final class ScriptedAuthenticator: Authenticator {
  private let state: Mutex<(current: Credentials?, renewals: Int)>
  private let next: Credentials?

  init(_ current: Credentials?, next: Credentials?) {
    state = Mutex((current, 0))
    self.next = next
  }

  var renewals: Int { state.withLock { $0.renewals } }

  func credentials() throws -> Credentials? { state.withLock { $0.current } }

  func refresh(_ stale: Credentials, through transport: any Transport) async throws
    -> Credentials?
  {
    state.withLock {
      $0.renewals += 1
      $0.current = next
    }
    return next
  }
}

@Suite("AuthTransport: the Authenticator port and the stored expiry")
struct AuthTransportExpiryTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)
  let origin = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/")
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/photos")
  let refreshURL = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/auth/refresh")

  func auth(
    _ transport: any Transport, _ authenticator: any Authenticator
  ) -> AuthTransport {
    AuthTransport(
      transport, authenticator: authenticator, credentialOrigin: origin,
      wallClock: FixedWallClock(instant: now))
  }

  @Test("a token within 30 s of its expiry is renewed before the request, not after a 401")
  func renewsBeforeExpiry() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let authenticator = ScriptedAuthenticator(
      Credentials(accessToken: "old", refreshToken: "r1", expiresAt: now.addingTimeInterval(20)),
      next: Credentials(accessToken: "new", refreshToken: "r2", expiresAt: now + 900))
    let (response, _) = try await auth(transport, authenticator).send(
      HTTPRequest(method: .get, url: url))
    #expect(response.status == 200)
    #expect(authenticator.renewals == 1)
    #expect(transport.requests.map { $0.headerFields[.authorization] } == ["Bearer new"])
  }

  @Test("a token far from its expiry is sent as it is, with no renewal")
  func keepsAFreshToken() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let authenticator = ScriptedAuthenticator(
      Credentials(accessToken: "old", refreshToken: "r1", expiresAt: now.addingTimeInterval(600)),
      next: nil)
    _ = try await auth(transport, authenticator).send(HTTPRequest(method: .get, url: url))
    #expect(authenticator.renewals == 0)
    #expect(transport.requests.first?.headerFields[.authorization] == "Bearer old")
  }

  @Test("a renewal before expiry is not repeated after a 401")
  func oneRenewalPerCall() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 401, json: #"{"code":"unauthorized","message":"expired"}"#)
    let authenticator = ScriptedAuthenticator(
      Credentials(accessToken: "old", refreshToken: "r1", expiresAt: now),
      next: Credentials(accessToken: "new", refreshToken: "r2"))
    let (response, _) = try await auth(transport, authenticator).send(
      HTTPRequest(method: .get, url: url))
    #expect(response.status == 401)
    #expect(authenticator.renewals == 1)
    #expect(transport.requests.count == 1)
  }

  @Test("the shipped authenticator posts the refresh token to its URL and saves the new pair")
  func shippedAuthenticator() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      status: 200, json: #"{"access_token":"new","refresh_token":"r2","expires_in":900}"#)
    transport.enqueue(status: 200)
    let store = InMemoryCredentialStore(
      Credentials(accessToken: "old", refreshToken: "r1", expiresAt: now.addingTimeInterval(5)))
    let authenticator = RefreshTokenAuthenticator(
      store: store, refreshURL: refreshURL, wallClock: FixedWallClock(instant: now))
    _ = try await auth(transport, authenticator).send(HTTPRequest(method: .get, url: url))
    #expect(transport.requests.map(\.path) == ["/auth/refresh", "/photos"])
    let sent = String(decoding: transport.receivedBodies[0] ?? Data(), as: UTF8.self)
    #expect(sent.contains("r1"))
    #expect(transport.requests[1].headerFields[.authorization] == "Bearer new")
    #expect(try store.load()?.expiresAt == now.addingTimeInterval(900))
  }
}
