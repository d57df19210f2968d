import CourierDomain
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A step of a user's own in the request pipeline (metrics, signing, a header), shaped like
/// swift-openapi-runtime's `ClientMiddleware`: it sees the request, its body and the call's
/// options, may change them, and calls `next` to go on (or answers without calling it).
///
/// The composition root places user middlewares inside the retry step and the auth step and
/// outside logging and the adapter: `Retry → Auth → middlewares (in list order) → Logging →
/// adapter`. So a middleware runs once per attempt (and for the replay after a token refresh,
/// and for the refresh call itself), and sees the final headers: `Authorization` and
/// `Idempotency-Key` are already set, and what it adds is logged (redacted).
///
/// A middleware may run on the transport's own thread (a replay waits there for its answers,
/// `Transport.taskExecutor`): it may suspend, but must not block that thread (a semaphore, a
/// synchronous network call).
public protocol TransportMiddleware: Sendable {
  /// Handles one attempt of a call.
  /// - Parameters:
  ///   - request: the request as the steps before this one left it.
  ///   - body: the body, if any.
  ///   - options: the call's options (deadline, progress, retry observer).
  ///   - next: sends the (possibly changed) request through the rest of the pipeline.
  /// - Returns: the response and its body, to hand back to the steps before this one.
  /// - Throws: what `next` throws, or the middleware's own error.
  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next:
      @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> (
        HTTPResponse, ResponseBody
      )
  ) async throws -> (HTTPResponse, ResponseBody)
}
