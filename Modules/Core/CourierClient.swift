import CourierDomain
import CourierPorts
import Foundation

/// The request pipeline's front: builds requests against the base URL, sends them through the
/// composed transport (retry, auth, logging around an adapter), and turns every failure into a
/// classified `CourierError`. Successful responses (2xx, 304) are returned.
public struct CourierClient: Sendable {
  /// The server's base URL; request paths are relative to it.
  public let baseURL: URL
  /// The composed transport.
  public let transport: any Transport
  /// Per-attempt options.
  public let options: TransportOptions

  /// Creates a client.
  /// - Parameters:
  ///   - baseURL: the base URL.
  ///   - transport: the composed transport.
  ///   - options: per-attempt options.
  public init(
    baseURL: URL, transport: any Transport, options: TransportOptions = TransportOptions()
  ) {
    self.baseURL = baseURL
    self.transport = transport
    self.options = options
  }

  /// Resolves a path against the base URL, keeping the base's own path prefix.
  /// - Parameter path: a path such as `/articles/42?x=1`, or an absolute `http(s)` URL.
  /// - Returns: the URL.
  /// - Throws: `CourierError.invalidInput` when the result is not a valid URL.
  public func url(_ path: String) throws -> URL {
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

  /// Builds a request.
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path relative to the base URL.
  ///   - headers: header fields.
  ///   - json: a value sent as a JSON body.
  /// - Returns: the request.
  /// - Throws: `CourierError.invalidInput` for a bad path or an unencodable body.
  public func request(
    _ method: HTTPMethod, _ path: String, headers: HTTPHeaders = [:],
    json: (any Encodable & Sendable)? = nil
  ) throws -> HTTPRequest {
    var request = HTTPRequest(method: method, url: try url(path), headers: headers)
    if request.headers["Accept"] == nil { request.headers["Accept"] = "application/json" }
    if let json {
      do {
        request.body = try JSONEncoder().encode(json)
      } catch {
        throw CourierError(.invalidInput, underlying: String(describing: error))
      }
      request.headers["Content-Type"] = "application/json; charset=utf-8"
    }
    return request
  }

  /// Sends a request through the pipeline.
  /// - Parameter request: the request.
  /// - Returns: the response, when it is a success (2xx or 304).
  /// - Throws: `CourierError`, classified, with the attempts made.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await checked(request) { try await transport.send(request, options: options) }
  }

  /// Uploads a body file through the pipeline.
  /// - Parameters:
  ///   - request: the request.
  ///   - file: the body file.
  ///   - progress: bytes sent.
  /// - Returns: the response, when it is a success.
  /// - Throws: `CourierError`, classified, with the attempts made.
  public func upload(
    _ request: HTTPRequest, bodyFile file: URL,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    try await checked(request) {
      try await transport.upload(request, bodyFile: file, options: options, progress: progress)
    }
  }

  /// Sends a request and decodes its JSON body.
  /// - Parameters:
  ///   - type: the expected type.
  ///   - request: the request.
  /// - Returns: the decoded value.
  /// - Throws: `CourierError`, `decoding` when the body does not match.
  public func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest) async throws -> T {
    let response = try await send(request)
    do {
      return try JSONDecoder().decode(T.self, from: response.body)
    } catch {
      throw CourierError(
        .decoding, status: response.status, attempts: response.attempts,
        underlying: String(describing: error), context: request.summary)
    }
  }

  private func checked(
    _ request: HTTPRequest, _ body: () async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let response: HTTPResponse
    do {
      response = try await body()
    } catch {
      var failure = CourierError.wrapping(error, context: request.summary)
      if failure.context == nil { failure.context = request.summary }
      throw failure
    }
    if let failure = ResponseClassifier.classify(response, context: request.summary) {
      throw failure
    }
    return response
  }
}
