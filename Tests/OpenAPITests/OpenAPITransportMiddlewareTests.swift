import CourierCore
import CourierDomain
import CourierLinux
import CourierOpenAPI
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

/// `X-Seen-By`, the field the recording middlewares add.
let seenBy = HTTPField.Name.named("X-Seen-By")

/// A swift-openapi-runtime middleware that writes a line on the way in and one on the way out,
/// and adds its name to `X-Seen-By`.
struct RecordingMiddleware: ClientMiddleware {
  let name: String
  let lines: Lines

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let fields = request.headerFields
    lines.append(
      "\(name)> \(request.method) \(request.path ?? "-") at \(baseURL.absoluteString)"
        + " scheme \(request.scheme ?? "-") op '\(operationID)'"
        + " auth \(fields[.authorization] ?? "-") key \(fields[.idempotencyKey] != nil)")
    var request = request
    request.headerFields[seenBy] = [fields[seenBy], name].compactMap { $0 }.joined(separator: ",")
    let (response, body) = try await next(request, body, baseURL)
    lines.append("<\(name) \(response.status.code)")
    return (response, body)
  }
}

/// A middleware made of a closure, for one test's own behaviour.
struct ClosureMiddleware: ClientMiddleware {
  let body:
    @Sendable (
      HTTPRequest, HTTPBody?, URL,
      @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?)

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    try await self.body(request, body, baseURL, next)
  }
}

@Suite("OpenAPITransportMiddleware")
struct OpenAPITransportMiddlewareTests {
  let url = URL(string: "http://127.0.0.1:9/articles?limit=2") ?? URL(fileURLWithPath: "/")

  /// The composition root's pipeline over a fake adapter, logged in as `tok`.
  func environment(
    _ memory: InMemoryTransport, middlewares: [any TransportMiddleware]
  ) throws -> CourierEnvironment {
    var config = CourierConfig(environment: [:])
    config.baseURL = try #require(URL(string: "http://127.0.0.1:9"))
    config.dataDirectory = FileManager.default.temporaryDirectory
    config.pathMonitor = .manual
    return try CourierEnvironment(
      config: config,
      overrides: AdapterOverrides(
        transport: memory, credentials: InMemoryCredentialStore(Credentials(accessToken: "tok"))),
      middlewares: middlewares)
  }

  @Test(
    "in the session's pipeline: list order, inside auth and retry, relative path, origin as base")
  func orderInThePipeline() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .created, json: #"{"id":"a1"}"#)
    let lines = Lines()
    let env = try environment(
      memory,
      middlewares: [
        OpenAPITransportMiddleware(RecordingMiddleware(name: "A", lines: lines)),
        OpenAPITransportMiddleware(
          RecordingMiddleware(name: "B", lines: lines), operationID: "traced"),
      ])
    let (response, body) = try await env.client.send(
      .post, "/articles?draft=1", json: ["id": "a1", "title": "Hi", "body": ""])
    #expect(response.status == .created)
    #expect(body.bytes == Data(#"{"id":"a1"}"#.utf8))
    #expect(
      lines.all == [
        "A> POST /articles?draft=1 at http://127.0.0.1:9 scheme - op '' auth Bearer tok key true",
        "B> POST /articles?draft=1 at http://127.0.0.1:9 scheme - op 'traced' auth Bearer tok key true",
        "<B 201",
        "<A 201",
      ])
    let sent = try #require(memory.requests.first)
    #expect(sent.url?.absoluteString == "http://127.0.0.1:9/articles?draft=1")
    #expect(sent.headerFields[seenBy] == "A,B")
    #expect(memory.receivedBodies.first??.isEmpty == false)
  }

  @Test("once per attempt: a 503 then 201 runs it twice, with the same Idempotency-Key")
  func perAttempt() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .serviceUnavailable, json: #"{"code":"unavailable","message":"busy"}"#)
    memory.enqueue(status: .created)
    let lines = Lines()
    let clock = ManualClock()
    let keys = Mutex<[String?]>([])
    let stack = RetryingTransport(
      MiddlewareTransport(
        memory,
        middlewares: [
          OpenAPITransportMiddleware(
            ClosureMiddleware { request, body, baseURL, next in
              keys.withLock { $0.append(request.headerFields[.idempotencyKey]) }
              return try await next(request, body, baseURL)
            }),
          OpenAPITransportMiddleware(RecordingMiddleware(name: "R", lines: lines)),
        ]),
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
    let task = Task { try await stack.send(HTTPRequest(method: .post, url: url)) }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    #expect(try await task.value.0.status == .created)
    #expect(lines.all.filter { $0.hasPrefix("R>") }.count == 2)
    #expect(lines.all.filter { $0.hasPrefix("<R") } == ["<R 503", "<R 201"])
    let seen = keys.withLock { $0 }
    #expect(seen.count == 2)
    #expect(seen[0] != nil && seen[0] == seen[1])
  }

  @Test("a body handed back unchanged is sent as it was: a file stays a file, no copy")
  func unchangedBodyIsNotCopied() async throws {
    let folder = try ScratchFolder()
    let file = folder.url.appendingPathComponent("photo.bin")
    let bytes = sampleBytes(200_000)
    try bytes.write(to: file)
    let memory = InMemoryTransport()
    memory.enqueue(status: .created)
    let read = Mutex<Data?>(nil)
    let bridge = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in
        // It may read the body (a checksum, a signature) and still pass it on.
        let whole = try await collect(body)
        read.withLock { $0 = whole }
        return try await next(request, body, baseURL)
      }, operationID: "", inMemoryLimit: 1024, temporaryDirectory: folder.url)
    let segments: [BodySegment] = [
      .bytes(Data("head".utf8)), .file(file, offset: 100, length: 150_000),
      .bytes(Data("tail".utf8)),
    ]
    _ = try await MiddlewareTransport(memory, middlewares: [bridge]).send(
      HTTPRequest(method: .post, url: url), body: .segments(segments))
    let expected = Data("head".utf8) + bytes[100..<150_100] + Data("tail".utf8)
    #expect(read.withLock { $0 } == expected)
    #expect(memory.bodies == [.segments(segments)])
    #expect(memory.receivedBodies == [expected])
    #expect(folder.contents == ["photo.bin"])
  }

  @Test("a new request body is read once and sent; past the limit through a removed file")
  func replacedBody() async throws {
    let folder = try ScratchFolder()
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok)
    memory.enqueue(status: .ok)
    let replacement = sampleBytes(5000)
    let bridge = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in
        let size = try await collect(body)?.count ?? 0
        let new = size > 2 ? singlePassBody(replacement, chunk: 700) : HTTPBody("small")
        return try await next(request, new, baseURL)
      }, operationID: "", inMemoryLimit: 1024, temporaryDirectory: folder.url)
    let stack = MiddlewareTransport(memory, middlewares: [bridge])
    _ = try await stack.send(HTTPRequest(method: .put, url: url), body: .bytes(Data("big".utf8)))
    _ = try await stack.send(HTTPRequest(method: .put, url: url), body: .bytes(Data("x".utf8)))
    #expect(memory.receivedBodies == [replacement, Data("small".utf8)])
    #expect(memory.uploadedFiles.count == 1)
    #expect(memory.bodies.last == .bytes(Data("small".utf8)))
    #expect(folder.contents.isEmpty)
  }

  @Test("the response body: passed on when returned as given, converted when replaced")
  func responseBodies() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok, json: #"{"from":"server"}"#)
    memory.enqueue(status: .ok, json: #"{"from":"server"}"#)
    let passing = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in try await next(request, body, baseURL) })
    let rewriting = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in
        let (response, received) = try await next(request, body, baseURL)
        let text = String(decoding: try await collect(received) ?? Data(), as: UTF8.self)
        var changed = response
        changed.headerFields[seenBy] = "rewriter"
        return (changed, HTTPBody(text.replacingOccurrences(of: "server", with: "middleware")))
      })
    let (first, firstBody) = try await MiddlewareTransport(memory, middlewares: [passing]).send(
      HTTPRequest(method: .get, url: url))
    #expect(first.status == .ok)
    #expect(firstBody.bytes == Data(#"{"from":"server"}"#.utf8))
    let (second, secondBody) = try await MiddlewareTransport(memory, middlewares: [rewriting]).send(
      HTTPRequest(method: .get, url: url))
    #expect(second.headerFields[seenBy] == "rewriter")
    #expect(secondBody.bytes == Data(#"{"from":"middleware"}"#.utf8))
  }

  @Test("a middleware may send elsewhere by changing the base URL, or answer without next")
  func baseURLAndShortCircuit() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok)
    let moving = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, _, next in
        try await next(request, body, try #require(URL(string: "https://mirror.example:8443/v1")))
      })
    _ = try await MiddlewareTransport(memory, middlewares: [moving]).send(
      HTTPRequest(method: .get, url: url))
    #expect(
      memory.requests.first?.url?.absoluteString
        == "https://mirror.example:8443/v1/articles?limit=2")

    let canned = OpenAPITransportMiddleware(
      ClosureMiddleware { _, _, _, _ in (HTTPResponse(status: .noContent), nil) })
    let (response, body) = try await MiddlewareTransport(memory, middlewares: [canned]).send(
      HTTPRequest(method: .delete, url: url))
    #expect(response.status == .noContent)
    #expect(body.bytes.isEmpty)
    #expect(memory.requests.count == 1)
  }

  @Test("what the middleware throws reaches the caller; a failure below reaches the middleware")
  func errors() async throws {
    struct Refused: Error, Equatable {}
    let memory = InMemoryTransport()
    let throwing = OpenAPITransportMiddleware(ClosureMiddleware { _, _, _, _ in throw Refused() })
    await #expect(throws: Refused.self) {
      _ = try await MiddlewareTransport(memory, middlewares: [throwing]).send(
        HTTPRequest(method: .get, url: url))
    }
    memory.enqueue(.failure(CourierError(.connectionLost)))
    let seen = Mutex<CourierError.Kind?>(nil)
    let watching = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in
        do {
          return try await next(request, body, baseURL)
        } catch let error as CourierError {
          seen.withLock { $0 = error.kind }
          throw error
        }
      })
    await #expect(throws: CourierError(.connectionLost)) {
      _ = try await MiddlewareTransport(memory, middlewares: [watching]).send(
        HTTPRequest(method: .get, url: url))
    }
    #expect(seen.withLock { $0 } == .connectionLost)
  }

  @Test("with the generated client's own middlewares too: runtime ones first, once per call")
  func besideClientMiddlewares() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok, json: "[]")
    let lines = Lines()
    let env = try environment(
      memory,
      middlewares: [OpenAPITransportMiddleware(RecordingMiddleware(name: "inside", lines: lines))])
    _ = try await generatedCall(
      CourierClientTransport(env.client), serverURL: env.config.baseURL,
      operationID: "listArticles", request: generatedRequest(.get, "/articles"),
      middlewares: [RecordingMiddleware(name: "outside", lines: lines)])
    #expect(
      lines.all == [
        "outside> GET /articles at http://127.0.0.1:9 scheme - op 'listArticles' auth - key false",
        "inside> GET /articles at http://127.0.0.1:9 scheme - op '' auth Bearer tok key false",
        "<inside 200",
        "<outside 200",
      ])
  }
}
