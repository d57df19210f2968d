import CourierDomain
import CourierPorts
import Foundation

/// A transport decorator that retries transient failures under a policy.
///
/// Every `POST` and `PATCH` without an `Idempotency-Key` gets one here (a UUID kept across
/// its retries), so a retry after a timeout or a reset never makes the server act twice.
/// `PUT` and `DELETE` are idempotent by method and get none unless the caller adds one.
/// When the retries end on an HTTP failure, the last response is returned as is (with its
/// `attempts`), for the caller to classify.
public struct RetryingTransport<C: Clock>: Transport where C.Duration == Duration {
  private let base: any Transport
  private let executor: RetryExecutor<C>
  private let onEvent: @Sendable (HTTPRequest, RetryEvent) -> Void

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport to retry.
  ///   - executor: the executor, with its policy, clock and shared budget.
  ///   - onEvent: receives each retry decision with the request it concerns.
  public init(
    _ base: any Transport, executor: RetryExecutor<C>,
    onEvent: @escaping @Sendable (HTTPRequest, RetryEvent) -> Void = { _, _ in }
  ) {
    self.base = base
    self.executor = executor
    self.onEvent = onEvent
  }

  /// Adds an `Idempotency-Key` to a non-idempotent request that has none.
  /// - Parameter request: the request.
  /// - Returns: the request, with a key when its method is not idempotent.
  public static func withIdempotencyKey(_ request: HTTPRequest) -> HTTPRequest {
    guard !request.method.isIdempotent, request.headers["Idempotency-Key"] == nil else {
      return request
    }
    var keyed = request
    keyed.headers["Idempotency-Key"] = UUID().uuidString.lowercased()
    return keyed
  }

  /// Sends with retries.
  /// - Parameters:
  ///   - request: the request.
  ///   - options: per-attempt options.
  /// - Returns: the first successful or non-retryable response, or the last one.
  /// - Throws: the last transport error, with `attempts` set.
  public func send(_ request: HTTPRequest, options: TransportOptions) async throws -> HTTPResponse {
    let keyed = Self.withIdempotencyKey(request)
    return try await retrying(keyed) { try await base.send(keyed, options: options) }
  }

  /// Uploads with retries; the body file is sent again from its start on each attempt.
  /// - Parameters:
  ///   - request: the request.
  ///   - file: the body file.
  ///   - options: per-attempt options.
  ///   - progress: bytes sent in the current attempt.
  /// - Returns: the first successful or non-retryable response, or the last one.
  /// - Throws: the last transport error, with `attempts` set.
  public func upload(
    _ request: HTTPRequest, bodyFile file: URL, options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    let keyed = Self.withIdempotencyKey(request)
    return try await retrying(keyed) {
      try await base.upload(keyed, bodyFile: file, options: options, progress: progress)
    }
  }

  private func retrying(
    _ request: HTTPRequest, _ attempt: @escaping @Sendable () async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let context = request.summary
    do {
      return try await executor.run(
        safeToRepeat: request.isSafeToRepeat,
        onEvent: { event in
          onEvent(request, event)
          RetryObservation.notify(request, event)
        }
      ) { number in
        let response = try await attempt()
        if let failure = ResponseClassifier.classify(response, context: context),
          failure.isTransient
        {
          throw ResponseFailure(courierError: failure, response: response)
        }
        var counted = response
        counted.attempts = number
        return counted
      }
    } catch let failure as ResponseFailure {
      var response = failure.response
      response.attempts = failure.courierError.attempts
      return response
    }
  }
}

extension RetryingTransport: SegmentForwarding {
  /// Whether the wrapped transport streams segments.
  public var forwardsSegments: Bool { SegmentStreaming.streamer(for: base) != nil }

  /// Uploads a segmented body with retries; the segments are read again on each attempt.
  /// - Parameters:
  ///   - request: the request.
  ///   - segments: the body's pieces.
  ///   - options: per-attempt options.
  ///   - progress: bytes sent in the current attempt.
  /// - Returns: the first successful or non-retryable response, or the last one.
  /// - Throws: the last transport error, with `attempts` set; `invalidInput` when the wrapped
  ///   transport cannot stream segments.
  public func upload(
    _ request: HTTPRequest, segments: [BodySegment], options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    let streamer = try SegmentStreaming.required(beneath: base, for: request)
    let keyed = Self.withIdempotencyKey(request)
    return try await retrying(keyed) {
      try await streamer.upload(keyed, segments: segments, options: options, progress: progress)
    }
  }
}

/// Carries a retryable HTTP failure through the executor while keeping the response.
struct ResponseFailure: CourierErrorCarrying, Sendable {
  var courierError: CourierError
  let response: HTTPResponse
}
