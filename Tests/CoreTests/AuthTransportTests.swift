import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

@Suite("AuthTransport")
struct AuthTransportTests {
  let refreshURL = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/auth/refresh")
  let url = URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/photos")

  @Test("401 → one refresh → one replay with the new token")
  func refreshAndReplay() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 401, json: #"{"code":"unauthorized","message":"expired"}"#)
    transport.enqueue(
      status: 200,
      json: #"{"access_token":"new","refresh_token":"r2","token_type":"Bearer","expires_in":3600}"#)
    transport.enqueue(status: 201)
    let store = InMemoryCredentialStore(Credentials(accessToken: "old", refreshToken: "r1"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    let (response, _) = try await auth.send(HTTPRequest(method: .post, url: url))
    #expect(response.status == 201)
    let requests = transport.requests
    #expect(requests.map(\.path) == ["/photos", "/auth/refresh", "/photos"])
    #expect(requests[0].headerFields[.authorization] == "Bearer old")
    #expect(requests[1].headerFields[.authorization] == nil)
    let refreshBody = transport.receivedBodies[1] ?? Data()
    #expect(String(decoding: refreshBody, as: UTF8.self).contains("r1"))
    #expect(requests[2].headerFields[.authorization] == "Bearer new")
    #expect(try store.load()?.refreshToken == "r2")
  }

  @Test("a refused refresh returns the 401 and forgets the session")
  func refusedRefresh() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 401)
    transport.enqueue(status: 401, json: #"{"code":"invalid_refresh_token","message":"no"}"#)
    let store = InMemoryCredentialStore(Credentials(accessToken: "old", refreshToken: "r1"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    let (response, responseBody) = try await auth.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 401)
    #expect(try store.load() == nil)
    let error = try #require(ResponseClassifier.classify(response, body: responseBody.bytes))
    #expect(error.userMessage == "Your session has expired. Please log in again.")
  }

  @Test("concurrent 401s share a single refresh")
  func singleFlight() async throws {
    let transport = InMemoryTransport()
    let refreshes = Mutex(0)
    let gate = AsyncGate()
    // Every call uses the same handler.
    let handler = InMemoryTransport.Reply.handler { request in
      if request.path == "/auth/refresh" {
        refreshes.withLock { $0 += 1 }
        await gate.wait()
        return (
          HTTPResponse(status: 200),
          ResponseBody(bytes: Data(#"{"access_token":"new","refresh_token":"r2"}"#.utf8))
        )
      }
      return (
        HTTPResponse(status: request.headerFields[.authorization] == "Bearer new" ? 200 : 401),
        ResponseBody()
      )
    }
    for _ in 0..<20 { transport.enqueue(handler) }
    let store = InMemoryCredentialStore(Credentials(accessToken: "old", refreshToken: "r1"))
    let auth = AuthTransport(transport, store: store, refreshURL: refreshURL)
    async let first = auth.send(HTTPRequest(method: .get, url: url))
    async let second = auth.send(HTTPRequest(method: .get, url: url))
    async let third = auth.send(HTTPRequest(method: .get, url: url))
    await gate.waitForWaiters(1)
    await gate.open()
    let statuses = try await [first.0.status, second.0.status, third.0.status]
    #expect(statuses == [200, 200, 200])
    #expect(refreshes.withLock { $0 } == 1)
  }
}
