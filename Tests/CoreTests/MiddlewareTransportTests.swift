import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The reply of a middleware or a transport: the response and its body.
typealias Answer = (HTTPResponse, ResponseBody)

/// `X-Trace`, the field the header middleware adds.
let traceField = HTTPField.Name.named("X-Trace")

/// Adds a fixed header to every attempt.
struct HeaderMiddleware: TransportMiddleware {
  let name: HTTPField.Name
  let value: String

  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> Answer
  ) async throws -> Answer {
    var request = request
    request.headerFields[name] = value
    return try await next(request, body, options)
  }
}

/// Counts the attempts it sees and records the headers each carried.
final class CountingMiddleware: TransportMiddleware {
  private let seen = Mutex<[HTTPFields]>([])
  var attempts: Int { seen.withLock { $0.count } }
  var headerFields: [HTTPFields] { seen.withLock { $0 } }

  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> Answer
  ) async throws -> Answer {
    seen.withLock { $0.append(request.headerFields) }
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
          transport, middlewares: [HeaderMiddleware(name: traceField, value: "t-1"), counter]),
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
    let (response, _) = try await task.value
    #expect(response.status == 201)
    #expect(events.withLock { $0 }.last == .succeeded(attempts: 2))
    #expect(counter.attempts == 2)
    // The header middleware ran first, the counter saw its header and the token.
    #expect(counter.headerFields.allSatisfy { $0[traceField] == "t-1" })
    #expect(counter.headerFields.allSatisfy { $0[.authorization] == "Bearer tok" })
    #expect(counter.headerFields.allSatisfy { $0[.idempotencyKey] != nil })
    #expect(transport.requests.allSatisfy { $0.headerFields[traceField] == "t-1" })
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
    struct Canned: TransportMiddleware {
      func intercept(
        _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
        next: @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> Answer
      ) async throws -> Answer {
        (HTTPResponse(status: 204), ResponseBody())
      }
    }
    let transport = InMemoryTransport()
    let stack = MiddlewareTransport(transport, middlewares: [Canned()])
    let (response, _) = try await stack.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 204)
    #expect(transport.requests.isEmpty)
  }

  @Test(
    "the retry step returns a final refusal as it came; the front classifies it, attempts known")
  func classifiedAtTheFront() async throws {
    let notFound = #"{"code":"not_found","message":"no such photo"}"#
    let transport = InMemoryTransport()
    transport.enqueue(status: 404, json: notFound)
    let clock = ManualClock()
    let stack = RetryingTransport(
      transport,
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
    let events = Mutex<[RetryEvent]>([])
    let (response, body) = try await stack.send(
      HTTPRequest(method: .get, url: url),
      options: TransportOptions(onRetry: { event in events.withLock { $0.append(event) } }))
    #expect(response.status == 404)
    #expect(String(decoding: body.bytes, as: UTF8.self) == notFound)
    #expect(events.withLock { $0 } == [.attemptStarted(attempt: 1), .succeeded(attempts: 1)])
    // Through the front, after a retried 503: the verdict of the last answer, with both attempts.
    transport.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    transport.enqueue(status: 404, json: notFound)
    let client = APIClient(baseURL: url.deletingLastPathComponent(), transport: stack)
    let task = Task { try await client.send(.get, "/photos/p9") }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    let error = await #expect(throws: CourierError.self) { try await task.value }
    #expect(error?.status == 404)
    #expect(error?.code == "not_found")
    #expect(error?.attempts == 2)
  }
}
