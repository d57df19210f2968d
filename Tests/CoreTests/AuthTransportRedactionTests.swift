import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// The auth step takes the session's tokens out of every reply that is not a success before it
/// goes further up (decision 2421): a server repeating the request's headers in its
/// refusal must not put the token on a screen or in the outbox.
@Suite("AuthTransport redaction")
struct AuthTransportRedactionTests {
  let refreshURL = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/auth/refresh")
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/articles/a")
  let mark = SecretRedaction.mark

  @Test("a refusal repeating the bearer token, in its body and a header, reaches nothing")
  func refusal() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      status: 400,
      json: #"{"code":"bad_request","message":"You sent Authorization: Bearer acc\/ess-1"}"#,
      headerFields: [HTTPField.Name("X-Echo")!: "Bearer acc/ess-1 and ref-2"])
    let store = InMemoryCredentialStore(
      Credentials(accessToken: "acc/ess-1", refreshToken: "ref-2"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    let (response, body) = try await auth.send(HTTPRequest(method: .put, url: url))
    #expect(transport.requests.first?.headerFields[.authorization] == "Bearer acc/ess-1")
    #expect(response.headerFields[HTTPField.Name("X-Echo")!] == "Bearer \(mark) and \(mark)")
    let error = try #require(ResponseClassifier.classify(response, body: body.bytes))
    #expect(error.serverMessage == "You sent Authorization: Bearer \(mark)")
    #expect(error.kind == .business && error.code == "bad_request")
  }

  @Test("a refusal repeating the token in a trailer field: taken out there too, kept apart")
  func trailers() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      .response(
        HTTPResponse(status: 400, headerFields: [.contentType: "application/json"]),
        body: ResponseBody(
          bytes: Data(#"{"code":"bad_request","message":"no"}"#.utf8),
          trailerFields: [HTTPField.Name("X-Echo")!: "Bearer tok-5"])))
    let auth = AuthTransport(
      transport, store: InMemoryCredentialStore(Credentials(accessToken: "tok-5")),
      refreshURL: refreshURL)
    let (response, body) = try await auth.send(HTTPRequest(method: .put, url: url))
    #expect(body.trailerFields == [HTTPField.Name("X-Echo")!: "Bearer \(mark)"])
    #expect(response.headerFields[HTTPField.Name("X-Echo")!] == nil)
  }

  @Test("the replay after a renewal: the old and the new tokens are both taken out")
  func afterRenewal() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 401)
    transport.enqueue(
      status: 200, json: #"{"access_token":"new-3","refresh_token":"ref-4","expires_in":60}"#)
    transport.enqueue(status: 422, json: #"{"code":"x","message":"new-3 after old-1, ref-2"}"#)
    let store = InMemoryCredentialStore(Credentials(accessToken: "old-1", refreshToken: "ref-2"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    let (response, body) = try await auth.send(HTTPRequest(method: .put, url: url))
    let error = try #require(ResponseClassifier.classify(response, body: body.bytes))
    #expect(error.serverMessage == "\(mark) after \(mark), \(mark)")
  }

  @Test("a refused renewal's message never carries the refresh token")
  func renewalRefused() async throws {
    let transport = InMemoryTransport()
    let authenticator = RefreshTokenAuthenticator(
      store: InMemoryCredentialStore(Credentials(accessToken: "old-1", refreshToken: "ref-2")),
      refreshURL: refreshURL)
    transport.enqueue(status: 403, json: #"{"code":"no","message":"ref-2 is not yours"}"#)
    let error = await #expect(throws: CourierError.self) {
      _ = try await authenticator.refresh(
        Credentials(accessToken: "old-1", refreshToken: "ref-2"), through: transport)
    }
    #expect(error?.serverMessage == "\(mark) is not yours")
  }

  @Test("a success's body is data: it passes exact, a token in it included")
  func successExact() async throws {
    let transport = InMemoryTransport()
    let record = #"{"id":"a","title":"acc-1","version":1}"#
    transport.enqueue(status: 200, json: record)
    let store = InMemoryCredentialStore(Credentials(accessToken: "acc-1"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    let (_, body) = try await auth.send(HTTPRequest(method: .get, url: url))
    #expect(body.bytes == Data(record.utf8))
  }
}
