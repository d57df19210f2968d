import CourierDomain
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends one HTTP request with its body and returns the response, whatever its status. One
/// job and one method, shaped like swift-openapi-runtime's `ClientTransport` and speaking
/// swift-http-types' `HTTPRequest` and `HTTPResponse`, so a decorator (auth, retry, logging, a
/// user's middleware) or a fake can stand in for it.
///
/// An adapter throws a `CourierError` only when no response was received (offline, timeout,
/// reset, cancelled...), never for a 4xx or 5xx: classifying a status is the pipeline's job. A
/// reply that is not valid HTTP (a status or a field name `HTTPResponse` cannot hold) is
/// `invalidResponse`. Cancellation is the calling task's: cancel it and the call ends as
/// `cancelled`.
public protocol Transport: Sendable {
  /// Sends a request with its body, if any.
  /// - Parameters:
  ///   - request: method, URL and header fields.
  ///   - body: the body: bytes, a file or segments, streamed from disk; nil for none.
  ///   - options: deadline, progress and retry observer for this call.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: `CourierError` when no response was received (`fileUnavailable` naming the
  ///   file when a file body cannot be read in full).
  func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody)

  /// The executor of the thread the transport answers on, when it has one: a caller that sends
  /// many requests one after another can run there (`withTaskExecutorPreference`), so that each
  /// answer resumes it on that thread instead of waking another, and its next request is handed
  /// over without waking the transport's. Nil (the default) for a transport without one; a
  /// transport wrapping another passes the inner one's on, and must then not block (a middleware
  /// that waits on a semaphore would hold up the transport's thread).
  var taskExecutor: (any TaskExecutor)? { get }
}

extension Transport {
  /// None: the caller's task runs where it would anyway.
  public var taskExecutor: (any TaskExecutor)? { nil }

  /// Sends a request, with a body or none, under default options.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body; nil for none.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: `CourierError` when no response was received.
  package func send(
    _ request: HTTPRequest, body: RequestBody? = nil
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await send(request, body: body, options: TransportOptions())
  }

  /// Sends a request without a body.
  /// - Parameters:
  ///   - request: the request.
  ///   - options: deadline, progress and retry observer for this call.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: `CourierError` when no response was received.
  package func send(
    _ request: HTTPRequest, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await send(request, body: nil, options: options)
  }
}
