import CoreMetrics
import CourierDomain
import CourierPorts
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The request pipeline's front: builds requests against the base URL, sends them through the
/// composed transport (retry, auth, logging around an adapter), and turns every failure into a
/// classified `CourierError` with the attempts the call made (learnt from the retry step's
/// events, decision 2201). Successful responses (2xx, 304) are returned with their bodies.
///
/// Its calls log to `options.logger`; what uses a client for its requests (`SyncEngine`, the
/// record sender) logs there too and records in the metrics factory it was given (decision
/// 2203).
public struct APIClient: Sendable {
  /// The server's base URL; request paths are relative to it.
  package let baseURL: URL
  /// The composed transport.
  package let transport: any Transport
  /// Per-attempt options, the logger of its calls among them.
  package let options: TransportOptions
  /// Where what uses this client records its metrics: sync engines (replays, the outbox) and
  /// record senders (replay lag).
  package let metrics: CourierMetrics

  /// Creates a client.
  /// - Parameters:
  ///   - baseURL: the base URL.
  ///   - transport: the composed transport.
  ///   - options: per-attempt options; its `logger` is where the calls, and the sync engines
  ///     using this client, log.
  ///   - metrics: where the sync engines and record senders using this client record their
  ///     metrics (the calls themselves are counted by the retry step's executor); the global
  ///     system's factory by default.
  public init(
    baseURL: URL, transport: any Transport, options: TransportOptions = TransportOptions(),
    metrics: any MetricsFactory = MetricsSystem.factory
  ) {
    self.init(
      baseURL: baseURL, transport: transport, options: options,
      metrics: CourierMetrics(factory: metrics))
  }

  /// Creates a client that records in metrics shared with the rest of a session.
  package init(
    baseURL: URL, transport: any Transport, options: TransportOptions, metrics: CourierMetrics
  ) {
    self.baseURL = baseURL
    self.transport = transport
    self.options = options
    self.metrics = metrics
  }

  /// Resolves a path against the base URL, keeping the base's own path prefix.
  /// - Parameter path: a path such as `/articles/42?x=1`, or an absolute `http(s)` URL.
  /// - Returns: the URL.
  /// - Throws: `CourierError.invalidInput` when the result is not a valid URL.
  package func url(_ path: String) throws -> URL {
    if path.hasPrefix("http://") || path.hasPrefix("https://") {
      guard let url = URL(string: path) else { throw Self.badPath(path) }
      return url
    }
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    let relative = path.drop { $0 == "/" }
    guard let url = URL(string: base + "/" + relative) else { throw Self.badPath(path) }
    return url
  }

  private static func badPath(_ path: String) -> CourierError {
    CourierError(.invalidInput, serverMessage: "“\(path)” is not a valid path or URL.")
  }

  /// Builds a request (its body, if any, is given to `send`).
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path relative to the base URL.
  ///   - headerFields: header fields.
  /// - Returns: the request, asking for JSON unless `headerFields` says otherwise.
  /// - Throws: `CourierError.invalidInput` for a bad path.
  package func request(
    _ method: HTTPRequest.Method, _ path: String, headerFields: HTTPFields = [:]
  ) throws -> HTTPRequest {
    var request = try HTTPRequest(
      checking: try url(path), method: method, headerFields: headerFields)
    if request.headerFields[.accept] == nil { request.headerFields[.accept] = "application/json" }
    return request
  }

  /// Encodes a value as a JSON body: a `JSONValue` as its own text (every number as it came,
  /// any nesting it holds), any other value with `JSONEncoder`.
  /// - Parameter value: the value.
  /// - Returns: the body's bytes.
  /// - Throws: `CourierError.invalidInput` when the value cannot be encoded.
  package static func json(_ value: any Encodable & Sendable) throws -> RequestBody {
    if let value = value as? JSONValue { return .bytes(Data(value.jsonText.utf8)) }
    do {
      return .bytes(try JSONEncoder().encode(value))
    } catch {
      throw CourierError(.invalidInput, underlying: String(describing: error))
    }
  }

  /// Sends a request with its body through the pipeline, under this client's options plus
  /// the given progress and retry observers.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body (bytes, a file or segments); nil for none.
  ///   - progress: receives body bytes sent so far in the current attempt; nil for none.
  ///   - onRetry: receives each retry decision for this call; nil for none.
  /// - Returns: the response, when it is a success (2xx or 304), and its body.
  /// - Throws: `CourierError`, classified, with the attempts made.
  package func send(
    _ request: HTTPRequest, body: RequestBody? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)? = nil
  ) async throws -> (HTTPResponse, ResponseBody) {
    let reply = try await exchange(request, body: body, progress: progress, onRetry: onRetry)
    return (reply.response, reply.body)
  }

  /// A successful exchange: the response, its body, and the attempts the call made.
  package struct Reply: Sendable {
    /// The response, 2xx or 304.
    package var response: HTTPResponse
    /// Its body.
    package var body: ResponseBody
    /// The attempts made (1 without retries).
    package var attempts: Int
  }

  /// ``send(_:body:progress:onRetry:)``, with the attempts the call made.
  package func exchange(
    _ request: HTTPRequest, body: RequestBody? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)? = nil, options callerOptions: TransportOptions? = nil
  ) async throws -> Reply {
    try await exchange(
      request, body: body, progress: progress, onRetry: onRetry, options: callerOptions,
      redacting: nil)
  }

  /// ``exchange(_:body:progress:onRetry:options:)``, taking `redaction`'s secrets (a login's
  /// password, which the request carried) out of a reply that is not a success before it is
  /// read (decision 2421).
  package func exchange(
    _ request: HTTPRequest, body: RequestBody? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)? = nil,
    options callerOptions: TransportOptions? = nil, redacting redaction: SecretRedaction?
  ) async throws -> Reply {
    var callOptions = callerOptions ?? options
    if let progress { callOptions.progress = progress }
    let attempts = AttemptCount()
    callOptions.onRetry = attempts.observer(before: onRetry ?? options.onRetry)
    let response: HTTPResponse
    var received: ResponseBody
    do {
      (response, received) = try await transport.send(request, body: body, options: callOptions)
    } catch {
      var failure = CourierError.wrapping(error, context: request.summary)
      if failure.context == nil { failure.context = request.summary }
      throw failure
    }
    if let redaction, !(200..<300).contains(response.status.code) {
      received = ResponseBody(
        bytes: redaction.body(received.bytes),
        trailerFields: received.trailerFields.map(redaction.fields))
    }
    // The retry step classified it too, to decide on retrying; the verdict is the same pure
    // function of the same answer.
    if let failure = ResponseClassifier.classify(
      response, body: received.bytes, attempts: attempts.value, context: request.summary)
    {
      throw failure
    }
    return Reply(response: response, body: received, attempts: attempts.value)
  }

  /// Builds and sends a request with a JSON body (or none) through the pipeline.
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path relative to the base URL.
  ///   - headerFields: header fields.
  ///   - json: a value sent as a JSON body; nil for none.
  /// - Returns: the response, when it is a success (2xx or 304), and its body.
  /// - Throws: `CourierError`: `invalidInput` for a bad path or an unencodable body, else
  ///   classified with the attempts made.
  public func send(
    _ method: HTTPRequest.Method, _ path: String, headerFields: HTTPFields = [:],
    json: (any Encodable & Sendable)? = nil
  ) async throws -> (HTTPResponse, ResponseBody) {
    var request = try request(method, path, headerFields: headerFields)
    var body: RequestBody?
    if let json {
      body = try Self.json(json)
      request.headerFields[.contentType] = "application/json; charset=utf-8"
    }
    return try await send(request, body: body)
  }

  /// Sends a request and decodes its JSON body.
  /// - Parameters:
  ///   - type: the expected type.
  ///   - request: the request.
  ///   - body: the request's body, if any.
  /// - Returns: the decoded value.
  /// - Throws: `CourierError`, `decoding` when the body does not match.
  package func decode<T: Decodable>(
    _ type: T.Type, from request: HTTPRequest, body: RequestBody? = nil
  ) async throws -> T {
    let reply = try await exchange(request, body: body)
    do {
      return try JSONDecoder().decode(T.self, from: reply.body.bytes)
    } catch {
      throw CourierError(
        .decoding, status: reply.response.status.code, attempts: reply.attempts,
        underlying: String(describing: error), context: request.summary)
    }
  }
}
