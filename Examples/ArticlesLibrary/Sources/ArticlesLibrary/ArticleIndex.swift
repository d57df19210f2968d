import Courier
import Foundation
import Logging

/// One line of the index: an article's id and title.
public struct ArticleSummary: Sendable, Hashable {
  /// The server's id, exact even above 2^53.
  public var id: Int64
  /// The title.
  public var title: String

  /// Creates a summary.
  /// - Parameters:
  ///   - id: the id.
  ///   - title: the title.
  public init(id: Int64, title: String) {
    self.id = id
    self.title = title
  }
}

/// Reads the article index (`GET /articles`) through any Courier transport, retrying transient
/// failures with Courier's jittered backoff on the clock it is given. It logs to the logger it is
/// given (Courier's retry decisions, its own requests through the transport's steps), and the
/// executor records its retries in the metrics factory the executor was given.
public struct ArticleIndex<C: Clock>: Sendable where C.Duration == Duration {
  private let baseURL: URL
  private let transport: any Transport
  private let retry: RetryExecutor<C>
  private let logger: Logger

  /// Creates an index reader.
  /// - Parameters:
  ///   - baseURL: the API's base URL.
  ///   - transport: the transport (a real adapter, or `InMemoryTransport` in tests).
  ///   - retry: the retry policy, the clock its waits are made on and its metrics.
  ///   - logger: where its requests and retry decisions are logged; nowhere by default.
  public init(
    baseURL: URL, transport: any Transport, retry: RetryExecutor<C>,
    logger: Logger = Logger(label: "articles-library", factory: { _ in SwiftLogNoOpLogHandler() })
  ) {
    self.baseURL = baseURL
    self.transport = transport
    self.retry = retry
    self.logger = logger
  }

  /// Fetches the index.
  /// - Returns: the articles with an integer id and a title, in the server's order.
  /// - Throws: `CourierError` when the server refuses or the retries run out, `decoding` when
  ///   the reply is not a JSON array.
  public func fetch() async throws -> [ArticleSummary] {
    let request = HTTPRequest(method: .get, url: baseURL.appendingPathComponent("articles"))
    let transport = self.transport
    let options = TransportOptions(logger: logger)
    let body = try await retry.run(safeToRepeat: true, logger: logger) { attempt in
      let (response, body) = try await transport.send(request, body: nil, options: options)
      if let failure = ResponseClassifier.classify(
        response, body: body.bytes, attempts: attempt, context: "GET /articles")
      {
        throw failure
      }
      return body
    }
    guard case .array(let items) = try? JSONValue(parsing: body.bytes) else {
      throw CourierError(.decoding, context: "GET /articles")
    }
    return items.compactMap { item in
      guard case .number(let number) = item["id"], let id = number.int64Value,
        case .string(let title) = item["title"]
      else {
        return nil
      }
      return ArticleSummary(id: id, title: title)
    }
  }
}
