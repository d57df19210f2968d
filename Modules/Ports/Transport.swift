import CourierDomain
import Foundation

/// Per-call options a transport honours, travelling with the call through every decorator:
/// the deadline, where upload progress goes, and who hears of retry decisions. Nothing about a
/// call is kept in a process-wide table.
public struct TransportOptions: Sendable {
  /// The overall time one attempt may take, connection and body included. URLSession on Linux
  /// only has an idle timeout, so adapters enforce this themselves.
  public var deadline: Duration?
  /// Receives the body bytes sent so far in the current attempt, from any thread; nil for
  /// none. It starts again from zero when an attempt is retried.
  public var progress: (@Sendable (TransferProgress) -> Void)?
  /// Receives each decision the retry step makes for this call, from the caller's task; nil
  /// for none.
  public var onRetry: (@Sendable (RetryEvent) -> Void)?

  /// Creates options.
  /// - Parameters:
  ///   - deadline: the per-attempt deadline; nil for none.
  ///   - progress: receives bytes sent so far; nil for none.
  ///   - onRetry: receives each retry decision; nil for none.
  public init(
    deadline: Duration? = .seconds(30),
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)? = nil
  ) {
    self.deadline = deadline
    self.progress = progress
    self.onRetry = onRetry
  }

  /// A copy with another deadline; progress and retry observers are kept.
  /// - Parameter deadline: the new deadline.
  /// - Returns: the copy.
  public func with(deadline: Duration?) -> TransportOptions {
    var copy = self
    copy.deadline = deadline
    return copy
  }
}

/// Sends one HTTP request with its body and returns the response, whatever its status. One
/// job and one method, so a decorator (auth, retry, logging, a user's middleware) or a fake
/// can stand in for it.
///
/// An adapter throws a `CourierError` only when no response was received (offline, timeout,
/// reset, cancelled...), never for a 4xx or 5xx: classifying a status is the pipeline's job.
/// Cancellation is the calling task's: cancel it and the call ends as `cancelled`.
public protocol Transport: Sendable {
  /// Sends a request with its body, if any.
  /// - Parameters:
  ///   - request: method, URL and header fields.
  ///   - body: the body: bytes, a file or segments, streamed from disk; nil for none.
  ///   - options: deadline, progress and retry observer for this call.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received (`fileUnavailable` naming the
  ///   file when a file body cannot be read in full).
  func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> HTTPResponse
}

extension Transport {
  /// Sends a request, with a body or none, under default options.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body; nil for none.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received.
  public func send(_ request: HTTPRequest, body: RequestBody? = nil) async throws -> HTTPResponse {
    try await send(request, body: body, options: TransportOptions())
  }

  /// Sends a request without a body.
  /// - Parameters:
  ///   - request: the request.
  ///   - options: deadline, progress and retry observer for this call.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received.
  public func send(_ request: HTTPRequest, options: TransportOptions) async throws -> HTTPResponse {
    try await send(request, body: nil, options: options)
  }
}
