import CourierDomain
import CourierPorts
import HTTPTypes
import OpenAPIRuntime
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A swift-openapi-runtime `ClientMiddleware` run as a step of Courier's pipeline: give it to
/// `CourierEnvironment(config:middlewares:)` and it runs once per attempt, inside the retry
/// and auth steps, for every request the session sends (a generated client's, Courier's own
/// sync and uploads, the token refresh), seeing the final `Authorization` and
/// `Idempotency-Key`.
///
/// ```swift
/// let environment = try CourierEnvironment(
///   config: config, middlewares: [OpenAPITransportMiddleware(TracingMiddleware())])
/// ```
///
/// Given to the generated client's own `middlewares:` instead, the same middleware runs once
/// per call, outside the retries, and for that client's requests only.
///
/// The middleware sees each request as the runtime shows one: its path and query relative to
/// a base URL that is the request's origin (`http://127.0.0.1:8080`). It may change the
/// request, the body and the base URL before calling `next`, answer without calling it, or
/// change the response. Bodies are converted both ways: a request body is an `HTTPBody` it can
/// read any number of times (files read from disk as it iterates); a body it hands back
/// unchanged is sent as it was, a new one is read once (into memory up to 1 MiB, beyond into a
/// temporary file); a response body it returns unchanged is passed on as it is, a new one is
/// read up to 64 MiB.
///
/// Courier's pipeline carries no OpenAPI operation: a request may not come from a generated
/// client at all. The middleware gets the `operationID` given here for every call, empty by
/// default.
public struct OpenAPITransportMiddleware: TransportMiddleware {
  private let middleware: any ClientMiddleware
  private let operationID: String
  private let inMemoryLimit: Int
  private let temporaryDirectory: URL

  /// The largest response body a middleware may hand back in place of the one it was given,
  /// as Courier's adapters bound theirs.
  static let maxResponseBytes = 64 << 20

  /// Wraps a swift-openapi-runtime middleware.
  /// - Parameters:
  ///   - middleware: the middleware.
  ///   - operationID: what it gets as the operation's identifier, on every call.
  public init(_ middleware: any ClientMiddleware, operationID: String = "") {
    self.init(
      middleware, operationID: operationID, inMemoryLimit: SpooledBody.defaultInMemoryLimit,
      temporaryDirectory: FileManager.default.temporaryDirectory)
  }

  /// A bridge with its body limit and spool folder set (for tests).
  package init(
    _ middleware: any ClientMiddleware, operationID: String, inMemoryLimit: Int,
    temporaryDirectory: URL
  ) {
    self.middleware = middleware
    self.operationID = operationID
    self.inMemoryLimit = inMemoryLimit
    self.temporaryDirectory = temporaryDirectory
  }

  /// Runs the wrapped middleware for one attempt, with `next` as its way on.
  /// - Parameters:
  ///   - request: the request, absolute.
  ///   - body: its body, if any.
  ///   - options: the call's options, passed on to `next` unchanged.
  ///   - next: the rest of Courier's pipeline.
  /// - Returns: the response and body the middleware returns.
  /// - Throws: what the middleware or the rest of the pipeline throws; `CourierError`
  ///   `invalidInput` for a request without a scheme and authority or a URL that cannot be
  ///   joined again, `fileUnavailable` for a body that cannot be read.
  public func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next:
      @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> (
        HTTPResponse, ResponseBody
      )
  ) async throws -> (HTTPResponse, ResponseBody) {
    let context = request.summary
    guard let (relative, baseURL) = RequestTarget.split(request) else {
      throw CourierError(
        .invalidInput, serverMessage: "The request has no scheme and host.", context: context)
    }
    let given = try body.map { try HTTPBody.of($0, context: context) }
    let exchanges = Exchanges()
    let (response, returned) = try await middleware.intercept(
      relative, body: given, baseURL: baseURL, operationID: operationID
    ) { [inMemoryLimit, temporaryDirectory] request, newBody, baseURL in
      let target = try RequestTarget.join(request, to: baseURL)
      let spooled =
        newBody == given
        ? SpooledBody(body: body, file: nil)
        : try await SpooledBody.read(
          newBody, inMemoryLimit: inMemoryLimit, directory: temporaryDirectory,
          context: target.summary)
      defer { spooled.remove() }
      let (response, received) = try await next(target, spooled.body, options)
      let handed = HTTPBody.of(received, response: response, method: target.method)
      exchanges.append(handed: handed, received: received)
      return (response, handed)
    }
    if let received = exchanges.received(for: returned) { return (response, received) }
    guard let returned else { return (response, ResponseBody()) }
    return (
      response,
      ResponseBody(bytes: try await Data(collecting: returned, upTo: Self.maxResponseBytes))
    )
  }
}

/// The response bodies `next` handed the middleware, each with what Courier received, so one
/// it returns unchanged is passed on without a copy.
private final class Exchanges: Sendable {
  private let list = Mutex<[(handed: HTTPBody?, received: ResponseBody)]>([])

  func append(handed: HTTPBody?, received: ResponseBody) {
    list.withLock { $0.append((handed, received)) }
  }

  /// What Courier received with the body `returned`, when `next` handed it out (the latest
  /// exchange for nil).
  func received(for returned: HTTPBody?) -> ResponseBody? {
    list.withLock { list in list.last { $0.handed == returned }?.received }
  }
}
