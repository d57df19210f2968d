import CourierCore
import CourierDomain
import CourierOpenAPI
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import Synchronization
import Testing

@Suite("CourierClientTransport")
struct CourierClientTransportTests {
  static let joins: [(base: String, path: String, url: String)] = [
    ("http://127.0.0.1:8080", "/articles", "http://127.0.0.1:8080/articles"),
    (
      "http://127.0.0.1:8080/", "/articles?limit=2&q=a%20b",
      "http://127.0.0.1:8080/articles?limit=2&q=a%20b"
    ),
    ("http://h:1/api", "/articles/a%2Fb", "http://h:1/api/articles/a%2Fb"),
    ("http://h:1/api/", "/health", "http://h:1/api/health"),
    ("http://h:1/api//", "/health", "http://h:1/api/health"),
    ("http://h:1/api?key=base", "/health?x=1", "http://h:1/api/health?x=1"),
    ("https://example.com", "/", "https://example.com/"),
    ("https://example.com/v2", "/", "https://example.com/v2/"),
    ("http://[::1]:9000/base", "/notes/n1", "http://[::1]:9000/base/notes/n1"),
    ("http://h:1", "relative?x", "http://h:1/relative?x"),
  ]

  @Test("the server URL and the request's path and query are joined", arguments: joins)
  func joinsBaseAndPath(row: (base: String, path: String, url: String)) async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok)
    let transport = CourierClientTransport(memory)
    _ = try await transport.send(
      generatedRequest(.get, row.path), body: nil, baseURL: try #require(URL(string: row.base)),
      operationID: "op")
    let sent = try #require(memory.requests.first)
    #expect(sent.url?.absoluteString == row.url)
    #expect(sent.method == .get)
  }

  @Test("one transport given two server URLs in turn joins each request to its own")
  func serverURLsInTurn() async throws {
    let memory = InMemoryTransport()
    let transport = CourierClientTransport(memory)
    let bases = ["http://a:1/v1", "http://a:1/v1", "http://b:2/", "http://a:1/v1/"]
    for base in bases {
      memory.enqueue(status: .ok)
      _ = try await transport.send(
        generatedRequest(.get, "/x"), body: nil, baseURL: try #require(URL(string: base)),
        operationID: "op")
    }
    #expect(
      memory.requests.map { $0.url?.absoluteString } == [
        "http://a:1/v1/x", "http://a:1/v1/x", "http://b:2/x", "http://a:1/v1/x",
      ])
  }

  @Test("a server URL that is not absolute (the runtime's default /) is refused, nothing sent")
  func relativeServerURL() async throws {
    let memory = InMemoryTransport()
    let transport = CourierClientTransport(memory)
    do {
      _ = try await transport.send(
        generatedRequest(.get, "/health"), body: nil, baseURL: .defaultOpenAPIServerURL,
        operationID: "health")
      Issue.record("expected a refusal")
    } catch let error as CourierError {
      #expect(error.kind == .invalidInput)
    }
    #expect(memory.requests.isEmpty)
  }

  @Test("method, header fields and body go out as given; the response comes back with its body")
  func roundTrip() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(
      status: .created, json: #"{"id":"a1","version":1}"#, headerFields: [.eTag: #""v1""#])
    let transport = CourierClientTransport(memory)
    let json = Data(#"{"id":"a1","title":"Hi","body":""}"#.utf8)
    let request = generatedRequest(
      .post, "/articles",
      headerFields: [.contentType: "application/json; charset=utf-8", .accept: "application/json"])
    let (response, body) = try await generatedCall(
      transport, serverURL: try #require(URL(string: "http://127.0.0.1:9")), request: request,
      body: HTTPBody(json))
    #expect(response.status == .created)
    #expect(response.headerFields[.eTag] == #""v1""#)
    #expect(body == Data(#"{"id":"a1","version":1}"#.utf8))
    let sent = try #require(memory.requests.first)
    #expect(sent.method == .post)
    #expect(sent.headerFields[.contentType] == "application/json; charset=utf-8")
    #expect(sent.headerFields[.accept] == "application/json")
    #expect(memory.receivedBodies == [json])
    // Small: bytes in memory, no file.
    #expect(memory.uploadedFiles.isEmpty)
  }

  @Test(
    "a body past the limit goes to a private temporary file, removed when the call ends",
    arguments: [false, true])
  func largeBodySpools(knownLength: Bool) async throws {
    let folder = try ScratchFolder()
    let memory = InMemoryTransport()
    let bytes = sampleBytes(300_000)
    let spooled = Mutex<(mode: UInt16, count: Int)?>(nil)
    memory.enqueue(
      .handler { _ in
        // The file, while the call is under way.
        let names = folder.contents
        if let name = names.first,
          let attributes = try? FileManager.default.attributesOfItem(
            atPath: folder.url.appendingPathComponent(name).path),
          let mode = attributes[.posixPermissions] as? NSNumber
        {
          spooled.withLock { $0 = (mode.uint16Value, names.count) }
        }
        return (HTTPResponse(status: .created), ResponseBody())
      })
    let transport = CourierClientTransport(
      memory, options: TransportOptions(), inMemoryLimit: 64 << 10,
      temporaryDirectory: folder.url)
    let body =
      knownLength
      ? HTTPBody(bytes) : singlePassBody(bytes)
    let (response, _) = try await transport.send(
      generatedRequest(.post, "/photos"), body: body,
      baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "uploadPhoto")
    #expect(response.status == .created)
    #expect(memory.receivedBodies == [bytes])
    #expect(memory.uploadedFiles.count == 1)
    #expect(memory.uploadedFiles.first?.lastPathComponent.hasPrefix("courier-multipart-") == true)
    #expect(spooled.withLock { $0 }?.mode == 0o600)
    #expect(spooled.withLock { $0 }?.count == 1)
    #expect(folder.contents.isEmpty)
  }

  @Test("a body at the limit stays in memory")
  func bodyAtTheLimit() async throws {
    let folder = try ScratchFolder()
    let memory = InMemoryTransport()
    memory.enqueue(status: .created)
    let transport = CourierClientTransport(
      memory, options: TransportOptions(), inMemoryLimit: 1000, temporaryDirectory: folder.url)
    let bytes = sampleBytes(1000)
    _ = try await transport.send(
      generatedRequest(.post, "/upload"), body: singlePassBody(bytes, chunk: 300),
      baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "echoUpload")
    #expect(memory.receivedBodies == [bytes])
    #expect(memory.uploadedFiles.isEmpty)
  }

  @Test("a spooled body is bounded by progress, not by the deadline; a small one by the deadline")
  func largeBodyBoundedByProgress() async throws {
    let folder = try ScratchFolder()
    let recorder = OptionsRecorder()
    let transport = CourierClientTransport(
      recorder, options: TransportOptions(deadline: .seconds(30)), inMemoryLimit: 100,
      temporaryDirectory: folder.url)
    let base = try #require(URL(string: "http://127.0.0.1:9"))
    _ = try await transport.send(
      generatedRequest(.post, "/photos"), body: HTTPBody(sampleBytes(101)), baseURL: base,
      operationID: "uploadPhoto")
    _ = try await transport.send(
      generatedRequest(.post, "/articles"), body: HTTPBody(sampleBytes(100)), baseURL: base,
      operationID: "createArticle")
    let options = recorder.options
    try #require(options.count == 2)
    #expect(options[0].deadline == nil)
    #expect(options[0].idleTimeout == .seconds(30))
    #expect(options[1].deadline == .seconds(30))
    #expect(options[1].idleTimeout == nil)
  }

  static let statuses: [(status: Int, body: String)] = [
    (409, #"{"code":"already_exists","message":"An article with this id already exists."}"#),
    (422, #"{"code":"validation_failed","message":"Title is empty.","field":"title"}"#),
    (401, #"{"code":"unauthorized","message":"Sign in first."}"#),
    (404, #"{"code":"not_found","message":"No such article."}"#),
    (428, #"{"code":"precondition_required","message":"…"}"#),
    (500, #"{"code":"internal_error","message":"…"}"#),
  ]

  @Test(
    "every HTTP status comes back as a response with its body, never as an error",
    arguments: statuses)
  func statusesPassThrough(row: (status: Int, body: String)) async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .init(code: row.status), json: row.body)
    let (response, body) = try await generatedCall(
      CourierClientTransport(memory), serverURL: try #require(URL(string: "http://127.0.0.1:9")),
      request: generatedRequest(.post, "/articles"), body: HTTPBody("{}"))
    #expect(response.status.code == row.status)
    #expect(body == Data(row.body.utf8))
  }

  @Test(
    "no body for HEAD, 204 and 304; an empty one for an empty 200",
    arguments: [
      (HTTPRequest.Method.head, 200, false), (.delete, 204, false), (.get, 304, false),
      (.get, 200, true),
    ])
  func bodilessResponses(method: HTTPRequest.Method, status: Int, hasBody: Bool) async throws {
    let memory = InMemoryTransport()
    memory.enqueue(.response(HTTPResponse(status: .init(code: status)), body: ResponseBody()))
    let (_, body) = try await CourierClientTransport(memory).send(
      generatedRequest(method, "/articles/a1"), body: nil,
      baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "op")
    #expect((body != nil) == hasBody)
  }

  @Test(
    "no answer: the CourierError reaches the caller inside the runtime's ClientError",
    arguments: [
      CourierError(.offline), CourierError(.timedOut, mayHaveReachedServer: true),
      CourierError(.cannotReachHost), CourierError(.tls),
      CourierError(.invalidResponse, code: "reply_status_invalid"),
    ])
  func transportFailureIsWrapped(failure: CourierError) async throws {
    let memory = InMemoryTransport()
    memory.enqueue(.failure(failure))
    do {
      _ = try await generatedCall(
        CourierClientTransport(memory), serverURL: try #require(URL(string: "http://127.0.0.1:9")),
        operationID: "listArticles", request: generatedRequest(.get, "/articles"))
      Issue.record("expected a failure")
    } catch let error as ClientError {
      #expect(error.operationID == "listArticles")
      let underlying = try #require(error.underlyingError as? CourierError)
      #expect(underlying.kind == failure.kind)
      #expect(underlying.context == "GET /articles")
      // What a program shows a person: Courier's sentence, not the runtime's description.
      #expect(CourierError.wrapping(error.underlyingError).userMessage == failure.userMessage)
      #expect(!failure.userMessage.isEmpty)
    }
  }

  @Test("a body that fails while read is an error of the call, and nothing is sent")
  func failingBody() async throws {
    struct Broken: Error {}
    let memory = InMemoryTransport()
    let stream = AsyncThrowingStream<HTTPBody.ByteChunk, any Error> { continuation in
      continuation.yield([1, 2, 3])
      continuation.finish(throwing: Broken())
    }
    do {
      _ = try await CourierClientTransport(memory).send(
        generatedRequest(.post, "/upload"), body: HTTPBody(stream, length: .unknown),
        baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "echoUpload")
      Issue.record("expected a failure")
    } catch let error as CourierError {
      #expect(error.kind == .unexpected)
      #expect(error.context == "POST /upload")
    }
    #expect(memory.requests.isEmpty)
  }

  @Test("the APIClient init takes the client's pipeline and options, not its base URL")
  func fromAPIClient() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .ok)
    let events = RetryEvents()
    let client = APIClient(
      baseURL: try #require(URL(string: "http://ignored.invalid")),
      transport: RetryingTransport(
        memory,
        executor: RetryExecutor(
          policy: RetryPolicy(), clock: ManualClock(), random: FixedRandomSource(0.5))),
      options: TransportOptions(onRetry: events.append))
    _ = try await CourierClientTransport(client).send(
      generatedRequest(.get, "/health"), body: nil,
      baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "health")
    #expect(memory.requests.first?.url?.absoluteString == "http://127.0.0.1:9/health")
    #expect(events.all.count == 2)  // attemptStarted, succeeded
  }
}

@Suite("CourierClientTransport through the retry step")
struct CourierClientTransportRetryTests {
  @Test(
    "503 with Retry-After then 201: one Idempotency-Key, the wait asked for, the body sent twice")
  func retriedPostKeepsItsKey() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(
      status: .serviceUnavailable, json: #"{"code":"unavailable","message":"busy"}"#,
      headerFields: [.retryAfter: "3"])
    memory.enqueue(status: .created, json: #"{"id":"a1"}"#)
    let clock = ManualClock()
    let events = RetryEvents()
    let pipeline = RetryingTransport(
      memory,
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
    let transport = CourierClientTransport(
      pipeline, options: TransportOptions(onRetry: events.append))
    let json = Data(#"{"id":"a1","title":"Hi","body":""}"#.utf8)
    let base = try #require(URL(string: "http://127.0.0.1:9"))
    // A single-pass body: the second attempt can only send it because it was spooled.
    let call = Task {
      try await generatedCall(
        transport, serverURL: base, operationID: "createArticle",
        request: generatedRequest(.post, "/articles"), body: singlePassBody(json, chunk: 5))
    }
    await clock.waitForSleepers(1)
    #expect(clock.sleepLog == [.milliseconds(3750)])
    clock.advance(by: .milliseconds(3750))
    let (response, body) = try await call.value
    #expect(response.status == .created)
    #expect(body == Data(#"{"id":"a1"}"#.utf8))
    let keys = memory.requests.map { $0.headerFields[.idempotencyKey] }
    #expect(keys.count == 2)
    #expect(keys[0] != nil)
    #expect(keys[0] == keys[1])
    #expect(memory.receivedBodies == [json, json])
    if case .succeeded(let attempts) = events.all.last {
      #expect(attempts == 2)
    } else {
      Issue.record("no succeeded event: \(events.all)")
    }
  }

  @Test("a key the generated client set (the Idempotency-Key parameter) is kept")
  func callersKeyIsKept() async throws {
    let memory = InMemoryTransport()
    memory.enqueue(status: .created)
    let pipeline = RetryingTransport(
      memory, executor: RetryExecutor(policy: RetryPolicy(), clock: ManualClock()))
    _ = try await CourierClientTransport(pipeline).send(
      generatedRequest(.post, "/articles", headerFields: [.idempotencyKey: "mine"]), body: nil,
      baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "createArticle")
    #expect(memory.requests.first?.headerFields[.idempotencyKey] == "mine")
  }

  @Test("503 until the retries end: the last 503 comes back as a response, with the attempts")
  func exhaustedRetriesReturnTheResponse() async throws {
    let memory = InMemoryTransport()
    for _ in 0..<2 { memory.enqueue(status: .serviceUnavailable) }
    let clock = ManualClock()
    let events = RetryEvents()
    let pipeline = RetryingTransport(
      memory,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: 2), clock: clock, random: FixedRandomSource(0.5)))
    let transport = CourierClientTransport(
      pipeline, options: TransportOptions(onRetry: events.append))
    let call = Task {
      try await transport.send(
        generatedRequest(.get, "/articles"), body: nil,
        baseURL: try #require(URL(string: "http://127.0.0.1:9")), operationID: "listArticles")
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(60))
    let (response, _) = try await call.value
    #expect(response.status == .serviceUnavailable)
    #expect(memory.requests.count == 2)
    guard case .gaveUp(let attempts, _, let error) = events.all.last else {
      Issue.record("no gaveUp event: \(events.all)")
      return
    }
    #expect(attempts == 2)
    #expect(error.kind == .overloaded)
  }
}
