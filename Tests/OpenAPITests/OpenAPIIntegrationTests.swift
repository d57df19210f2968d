import CourierCore
import CourierDomain
import CourierLinux
import CourierOpenAPI
import CourierPorts
import CourierSystem
import CourierTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

/// `CourierClientTransport` and the middleware bridge against the reference backend, with
/// requests written as the generated client writes them (Examples/OpenAPIClient generates the
/// real one): the session's login, token, retries and classification, over libcurl.
@Suite("CourierOpenAPI against the reference backend", .serialized, .sharedBackend)
struct OpenAPIIntegrationTests {
  /// A session on the backend, logged in as alice, with a data folder of its own.
  func session(
    _ backend: ReferenceBackend, middlewares: [any TransportMiddleware] = []
  ) async throws -> (CourierSession, URL) {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-openapi-\(UUID().uuidString)")
    var config = CourierConfig(environment: [:])
    config.baseURL = backend.url
    config.dataDirectory = folder
    config.pathMonitor = .manual
    let session = CourierSession(
      environment: try CourierEnvironment(config: config, middlewares: middlewares))
    try await session.login(username: "alice", password: "secret")
    return (session, folder)
  }

  func json(_ object: [String: String]) throws -> HTTPBody {
    HTTPBody(try JSONSerialization.data(withJSONObject: object))
  }

  let jsonFields: HTTPFields = [
    .contentType: "application/json; charset=utf-8", .accept: "application/json",
  ]

  @Test("the session's token goes with every call; statuses come back as the server sent them")
  func tokenAndStatuses() async throws {
    let backend = try await SharedBackend.fresh()
    let (courier, folder) = try await session(backend)
    defer { try? FileManager.default.removeItem(at: folder) }
    let transport = CourierClientTransport(courier.environment.client)
    let id = UUID().uuidString.lowercased()
    let (created, createdBody) = try await transport.send(
      generatedRequest(.post, "/articles", headerFields: jsonFields),
      body: try json(["id": id, "title": "From OpenAPI", "body": ""]), baseURL: courier.baseURL,
      operationID: "createArticle")
    #expect(created.status == .created)
    let createdBytes = try #require(try await collect(createdBody))
    let article = try #require(
      try JSONSerialization.jsonObject(with: createdBytes) as? [String: Any])
    #expect(article["id"] as? String == id)

    let (again, againBody) = try await transport.send(
      generatedRequest(.post, "/articles", headerFields: jsonFields),
      body: try json(["id": id, "title": "From OpenAPI", "body": ""]), baseURL: courier.baseURL,
      operationID: "createArticle")
    #expect(again.status == .conflict)
    let refusal = String(decoding: try await collect(againBody) ?? Data(), as: UTF8.self)
    #expect(refusal.contains(#""code":"already_exists""#))

    let (listed, listBody) = try await transport.send(
      generatedRequest(.get, "/articles", headerFields: [.accept: "application/json"]), body: nil,
      baseURL: courier.baseURL, operationID: "listArticles")
    #expect(listed.status == .ok)
    let list = String(decoding: try await collect(listBody) ?? Data(), as: UTF8.self)
    #expect(list.contains(id))

    let (missing, _) = try await transport.send(
      generatedRequest(.get, "/articles/\(UUID().uuidString.lowercased())"), body: nil,
      baseURL: courier.baseURL, operationID: "getArticle")
    #expect(missing.status == .notFound)

    try courier.logout()
    let (refused, _) = try await transport.send(
      generatedRequest(.get, "/articles"), body: nil, baseURL: courier.baseURL,
      operationID: "listArticles")
    #expect(refused.status == .unauthorized)
  }

  @Test("503 with Retry-After, then 201: retried once, one Idempotency-Key, the bridge per attempt")
  func retriedCreate() async throws {
    let backend = try await SharedBackend.fresh()
    let attempts = Lines()
    let counting = OpenAPITransportMiddleware(
      ClosureMiddleware { request, body, baseURL, next in
        // Every request of the session passes here; the creates are the ones to count.
        if request.path == "/articles" {
          attempts.append(request.headerFields[.idempotencyKey] ?? "-")
        }
        return try await next(request, body, baseURL)
      })
    let (courier, folder) = try await session(backend, middlewares: [counting])
    defer { try? FileManager.default.removeItem(at: folder) }
    let events = RetryEvents()
    let client = courier.environment.client
    let transport = CourierClientTransport(
      APIClient(
        baseURL: client.baseURL, transport: client.transport,
        options: TransportOptions(deadline: client.options.deadline, onRetry: events.append)))
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":1,"status":503,"retry_after":1}"#)
    let start = ContinuousClock.now
    let (response, _) = try await transport.send(
      generatedRequest(.post, "/articles", headerFields: jsonFields),
      body: try json(["id": UUID().uuidString.lowercased(), "title": "Retried", "body": ""]),
      baseURL: courier.baseURL, operationID: "createArticle")
    #expect(response.status == .created)
    #expect(start.duration(to: .now) >= .seconds(1))
    #expect(events.all.last == .succeeded(attempts: 2))
    let log = try await backend.log().filter {
      $0["method"] as? String == "POST" && $0["path"] as? String == "/articles"
    }
    #expect(log.compactMap { $0["status"] as? Int } == [503, 201])
    let keys = log.compactMap { $0["idempotency_key"] as? String }
    #expect(keys.count == 2)
    #expect(Set(keys).count == 1)
    #expect(attempts.all == [keys.first ?? "?", keys.first ?? "?"])
  }

  @Test("a 3 MiB single-pass multipart body goes through a spool file and arrives whole")
  func largeStreamedBody() async throws {
    let backend = try await SharedBackend.fresh()
    let (courier, folder) = try await session(backend)
    defer { try? FileManager.default.removeItem(at: folder) }
    let photo = sampleBytes(3 << 20)
    let boundary = "courier-openapi-test"
    let head = Data(
      ("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.bin\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    let tail = Data("\r\n--\(boundary)--\r\n".utf8)
    let (response, body) = try await CourierClientTransport(courier.environment.client).send(
      generatedRequest(
        .post, "/upload",
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: singlePassBody(head + photo + tail, chunk: 64 << 10), baseURL: courier.baseURL,
      operationID: "echoUpload")
    #expect(response.status == .ok)
    let echoed = try #require(try await collect(body))
    let parts = try #require(
      try JSONSerialization.jsonObject(with: echoed) as? [[String: Any]])
    #expect(parts.first?["size"] as? Int == photo.count)
    #expect(parts.first?["sha256"] as? String == SHA256.hex(SHA256.hash(photo)))
  }
}
