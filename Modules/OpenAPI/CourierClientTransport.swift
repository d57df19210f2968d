import CourierCore
import CourierDomain
import CourierPorts
import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's requests through
/// Courier's pipeline: the retry step (policy, `Retry-After`, the shared retry budget, one
/// `Idempotency-Key` for every attempt of a `POST`), the session's bearer token and its
/// refresh, your `TransportMiddleware`s, logging, and the adapter (libcurl or URLSession).
///
/// ```swift
/// let courier = try CourierSession.fromEnvironment()
/// try await courier.login(username: "alice", password: "secret")
/// let client = Client(
///   serverURL: courier.baseURL, transport: CourierClientTransport(courier.environment.client))
/// let created = try await client.createArticle(body: .json(.init(body: "", id: id, title: "Hi")))
/// ```
///
/// What reaches the generated client:
/// - **Every HTTP answer, as a response**, after the retry step is done with it: a 409 or a
///   422 decodes as the operation's `.conflict` or `.unprocessableContent`, a 401 the refresh
///   could not cure as `.unauthorized`, a 503 still there after the retries as
///   `.undocumented(statusCode: 503, _)`. The transport never turns a status into an error,
///   as no `ClientTransport` does: the document says what each status means.
/// - **A `CourierError` when no answer came** (offline, timed out, connection lost, a reply
///   that is not HTTP, cancelled, a body that could not be read), classified and with the
///   attempts made. The generated client throws it wrapped in a `ClientError`, whose
///   `underlyingError` is the `CourierError`: `CourierError.wrapping(clientError.underlyingError)`
///   gives its `userMessage`.
///
/// The token goes only to the origin of the session's base URL (decision 0005): give the
/// generated client that URL as its `serverURL`.
///
/// A request body is read once, before the first attempt, into memory up to 1 MiB and beyond
/// that into a private temporary file removed when the call ends, so that every attempt can
/// send it again from its start; a body that large is bounded by progress, as Courier's
/// uploads are, rather than by the deadline. A response body is the bytes the adapter read.
public struct CourierClientTransport: ClientTransport {
  private let transport: any Transport
  private let options: TransportOptions
  private let inMemoryLimit: Int
  private let temporaryDirectory: URL
  private let bases = RequestTarget.BaseCache()

  /// A transport that sends through an `APIClient`'s pipeline, under its options (deadline,
  /// retry observer): a session's `environment.client`. The client's own base URL is not
  /// used; each request goes to the generated client's `serverURL`.
  /// - Parameter client: the client whose pipeline and options to use.
  public init(_ client: APIClient) {
    self.init(client.transport, options: client.options)
  }

  /// A transport that sends through any Courier `Transport`: a pipeline you composed yourself
  /// (`RetryingTransport(AuthTransport(…))`), or an `InMemoryTransport` in a test.
  /// - Parameters:
  ///   - transport: the transport every request goes through.
  ///   - options: the options of every call (deadline, progress, retry observer).
  public init(_ transport: any Transport, options: TransportOptions = TransportOptions()) {
    self.init(
      transport, options: options, inMemoryLimit: SpooledBody.defaultInMemoryLimit,
      temporaryDirectory: FileManager.default.temporaryDirectory)
  }

  /// A transport with its body limit and spool folder set (for tests).
  package init(
    _ transport: any Transport, options: TransportOptions, inMemoryLimit: Int,
    temporaryDirectory: URL
  ) {
    self.transport = transport
    self.options = options
    self.inMemoryLimit = inMemoryLimit
    self.temporaryDirectory = temporaryDirectory
  }

  /// Sends a generated client's request through the pipeline.
  /// - Parameters:
  ///   - request: the request, its path (and query) relative to `baseURL`.
  ///   - body: its body; nil for none.
  ///   - baseURL: the server URL; its path is put before the request's.
  ///   - operationID: the operation, unused: Courier's steps do not need it.
  /// - Returns: the response, whatever its status, and its body (nil for a `HEAD`, 1xx, 204
  ///   or 304).
  /// - Throws: `CourierError` when no response was received, or when the request cannot be
  ///   built (`invalidInput`) or its body read (`fileUnavailable`).
  public func send(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let target = try RequestTarget.join(request, to: bases.base(of: baseURL))
    let spooled = try await SpooledBody.read(
      body, inMemoryLimit: inMemoryLimit, directory: temporaryDirectory, context: target.summary)
    defer { spooled.remove() }
    do {
      let (response, received) = try await transport.send(
        target, body: spooled.body,
        options: spooled.file == nil ? options : options.boundedByProgress())
      return (response, HTTPBody.of(received, response: response, method: target.method))
    } catch {
      let context = target.summary
      var failure = CourierError.wrapping(error, context: context)
      if failure.context == nil { failure.context = context }
      throw failure
    }
  }
}
