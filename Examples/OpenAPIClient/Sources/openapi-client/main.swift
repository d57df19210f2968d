// Talks to Courier's reference backend through the client swift-openapi-generator made from its
// document (openapi.json), sending every call through Courier's pipeline (CourierOpenAPI): the
// session's login and token, retries with one Idempotency-Key, classified failures.
// Reads COURIER_BASE_URL (and the config file, like `courier`), COURIER_USERNAME and
// COURIER_PASSWORD, as the README's program does. Exits 1 unless a create that met a 503 was
// retried once with the same key.
import CourierLinux
import CourierOpenAPI
import Foundation
import Logging
import OpenAPIRuntime

/// Prints each retry the pipeline decides, as `retry: <why>`: Courier logs a retry at `info`
/// with the wait before the next attempt (`courier.retry.delay`), and nothing else at that key.
struct RetryPrinter: LogHandler {
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .info

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    guard event.metadata?["courier.retry.delay"] != nil else { return }
    print("retry: \(event.message)")
  }
}

/// The backend's chaos hook (`POST /__chaos`, a test hook outside the document): the next
/// request to `path` fails with `status` and `Retry-After: retryAfter`.
struct Chaos: Encodable, Sendable {
  let failNext = 1
  let status = 503
  let retryAfter = 1
  let path = "/articles"

  enum CodingKeys: String, CodingKey {
    case failNext = "fail_next", status, retryAfter = "retry_after", path
  }
}

/// One line of the backend's request log (`GET /__log`, a test hook).
struct LogEntry: Decodable {
  let method: String
  let path: String
  let idempotencyKey: String?
  let status: Int?

  enum CodingKeys: String, CodingKey {
    case method, path, idempotencyKey = "idempotency_key", status
  }
}

let env = ProcessInfo.processInfo.environment
do {
  // The session logs its retries to this logger, which prints them.
  let courier = try CourierSession.fromEnvironment(
    logger: Logger(label: "openapi-client") { _ in RetryPrinter() })
  try await courier.login(
    username: env["COURIER_USERNAME"] ?? "", password: env["COURIER_PASSWORD"] ?? "")
  // The session's pipeline (retry, the token, middlewares, libcurl).
  let pipeline = courier.environment.client
  let transport = CourierClientTransport(pipeline)
  // The backend writes times with milliseconds; the token goes to the session's origin only.
  let client = Client(
    serverURL: courier.baseURL,
    configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds),
    transport: transport)

  let articles = try await client.listArticles().ok.body.json
  print("listed: \(articles.count) articles")
  let first = try await client.createArticle(
    body: .json(.init(body: "", id: UUID().uuidString.lowercased(), title: "From OpenAPI"))
  ).created.body.json
  print("created: \(first.title) (version \(first.version))")
  // A refusal is the operation's documented case, not an error.
  if case .conflict(let refusal) = try await client.createArticle(
    body: .json(.init(body: "", id: first.id, title: "Again")))
  {
    print("refused: \(try refusal.body.json.message)")
  }

  // The hook is not in the document: a plain request through the same session.
  _ = try await pipeline.send(.post, "/__chaos", json: Chaos())
  let second = try await client.createArticle(
    body: .json(.init(body: "", id: UUID().uuidString.lowercased(), title: "After a 503"))
  ).created.body.json
  print("created: \(second.title) (version \(second.version))")

  let (_, logBody) = try await pipeline.send(.get, "/__log")
  let log = try JSONDecoder().decode([LogEntry].self, from: logBody.bytes)
  let posts = log.filter { $0.method == "POST" && $0.path == "/articles" }.suffix(2)
  let statuses = posts.map { $0.status.map(String.init) ?? "-" }
  let keys = Set(posts.compactMap(\.idempotencyKey))
  print("server saw: POST /articles \(statuses.joined(separator: ", ")), \(keys.count) key")
  exit(statuses == ["503", "201"] && keys.count == 1 ? 0 : 1)
} catch let error as ClientError {
  // No answer (offline, timed out…): Courier's classified error, inside the runtime's.
  print("openapi-client: \(CourierError.wrapping(error.underlyingError).userMessage)")
  exit(1)
} catch {
  print("openapi-client: \(CourierError.wrapping(error).userMessage)")
  exit(1)
}
