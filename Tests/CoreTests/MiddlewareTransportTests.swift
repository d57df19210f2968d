import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Synchronization
import Testing

/// Adds a fixed header to every attempt.
struct HeaderMiddleware: ClientMiddleware {
  let name: String
  let value: String

  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    var request = request
    request.headers[name] = value
    return try await next(request, body, options)
  }
}

/// Counts the attempts it sees and records the headers each carried.
final class CountingMiddleware: ClientMiddleware {
  private let seen = Mutex<[HTTPHeaders]>([])
  var attempts: Int { seen.withLock { $0.count } }
  var headers: [HTTPHeaders] { seen.withLock { $0 } }

  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    seen.withLock { $0.append(request.headers) }
    return try await next(request, body, options)
  }
}

@Suite("User middleware in the pipeline")
struct MiddlewareTransportTests {
  let url = URL(string: "http://127.0.0.1:1/photos") ?? URL(fileURLWithPath: "/")

  @Test("runs once per attempt, inside retry and auth, in list order, and sees final headers")
  func oncePerAttemptInsideRetryAndAuth() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    transport.enqueue(status: 201, json: #"{"id":"p1"}"#)
    let counter = CountingMiddleware()
    let clock = ManualClock()
    let stack = RetryingTransport(
      AuthTransport(
        MiddlewareTransport(
          transport, middlewares: [HeaderMiddleware(name: "X-Trace", value: "t-1"), counter]),
        store: InMemoryCredentialStore(Credentials(accessToken: "tok")),
        refreshURL: url.deletingLastPathComponent().appendingPathComponent("auth/refresh")),
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
    let events = Mutex<[RetryEvent]>([])
    let task = Task {
      try await stack.send(
        HTTPRequest(method: .post, url: url), body: .bytes(Data("x".utf8)),
        options: TransportOptions(onRetry: { event in events.withLock { $0.append(event) } }))
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    let response = try await task.value
    #expect(response.status == 201)
    #expect(response.attempts == 2)
    #expect(counter.attempts == 2)
    // The header middleware ran first, the counter saw its header and the token.
    #expect(counter.headers.allSatisfy { $0["X-Trace"] == "t-1" })
    #expect(counter.headers.allSatisfy { $0["Authorization"] == "Bearer tok" })
    #expect(counter.headers.allSatisfy { $0["Idempotency-Key"] != nil })
    #expect(transport.requests.allSatisfy { $0.headers["X-Trace"] == "t-1" })
    #expect(transport.receivedBodies.allSatisfy { $0 == Data("x".utf8) })
    // Retry decisions reached the call's own observer.
    let retries = events.withLock { $0 }.filter {
      if case .retrying = $0 { return true }
      return false
    }
    #expect(retries.count == 1)
  }

  @Test("a middleware may answer without calling next")
  func shortCircuit() async throws {
    struct Canned: ClientMiddleware {
      func intercept(
        _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
        next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> HTTPResponse
      ) async throws -> HTTPResponse {
        HTTPResponse(status: 204)
      }
    }
    let transport = InMemoryTransport()
    let stack = MiddlewareTransport(transport, middlewares: [Canned()])
    let response = try await stack.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 204)
    #expect(transport.requests.isEmpty)
  }

  @Test("the retry step classifies once: the front gets its verdict on the response")
  func classifiedOnce() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 404, json: #"{"code":"not_found","message":"no such photo"}"#)
    let stack = RetryingTransport(
      transport,
      executor: RetryExecutor(
        policy: RetryPolicy(), clock: ManualClock(), random: FixedRandomSource(0.5)))
    let response = try await stack.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 404)
    #expect(response.failure?.status == 404)
    #expect(response.failure?.attempts == 1)
  }
}
