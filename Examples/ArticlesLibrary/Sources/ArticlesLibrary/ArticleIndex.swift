import Courier
import Foundation

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
/// failures with Courier's jittered backoff on the clock it is given.
public struct ArticleIndex<C: Clock>: Sendable where C.Duration == Duration {
  private let baseURL: URL
  private let transport: any Transport
  private let retry: RetryExecutor<C>

  /// Creates an index reader.
  /// - Parameters:
  ///   - baseURL: the API's base URL.
  ///   - transport: the transport (a real adapter, or `InMemoryTransport` in tests).
  ///   - retry: the retry policy and the clock its waits are made on.
  public init(baseURL: URL, transport: any Transport, retry: RetryExecutor<C>) {
    self.baseURL = baseURL
    self.transport = transport
    self.retry = retry
  }

  /// Fetches the index.
  /// - Returns: the articles with an integer id and a title, in the server's order.
  /// - Throws: `CourierError` when the server refuses or the retries run out, `decoding` when
  ///   the reply is not a JSON array.
  public func fetch() async throws -> [ArticleSummary] {
    let request = HTTPRequest(method: .get, url: baseURL.appendingPathComponent("articles"))
    let transport = self.transport
    let body = try await retry.run(safeToRepeat: true) { attempt in
      let (response, body) = try await transport.send(request)
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
      guard case .integer(let id) = item["id"], let title = item["title"]?.stringValue else {
        return nil
      }
      return ArticleSummary(id: id, title: title)
    }
  }
}
