import CourierDomain
import CourierPorts
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport decorator that retries transient failures under a policy.
///
/// Every `POST` and `PATCH` without an `Idempotency-Key` gets one here (a UUID kept across
/// its retries), so a retry after a timeout or a reset never makes the server act twice.
/// `PUT` and `DELETE` are idempotent by method and get none unless the caller adds one.
/// A reply cut short of its length is not a passing fault: a `GET` or `HEAD` asks for it once
/// more, a write is not sent again (decision 2436).
/// It classifies each response (`ResponseClassifier`) to decide whether to retry: when the
/// retries end on an HTTP failure, or on one not worth retrying, the last response is returned
/// as it came. Every decision, the attempt count included, goes to the call's `onRetry`, from
/// which the front (`APIClient`, `Uploader`) learns the attempts, and it classifies the final
/// response with the same pure function (decision 2201).
///
/// It is where a call is a call (decision 2203): it gives the call's logger a
/// `courier.request.id` (when it has none) and each attempt's copy a `courier.attempt`, logs
/// the decisions through its executor, and counts the call in the executor's metrics
/// (`courier_requests_total{outcome}`, `courier_request_duration_seconds`, measured on the
/// executor's clock).
package struct RetryingTransport<C: Clock>: Transport where C.Duration == Duration {
  private let base: any Transport

  /// The wrapped transport's (see `Transport.taskExecutor`).
  package var taskExecutor: (any TaskExecutor)? { base.taskExecutor }
  private let executor: RetryExecutor<C>
  private let onEvent: @Sendable (HTTPRequest, RetryEvent) -> Void

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport to retry.
  ///   - executor: the executor, with its policy, clock and shared budget.
  ///   - onEvent: receives each retry decision with the request it concerns.
  package init(
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
  package static func withIdempotencyKey(_ request: HTTPRequest) -> HTTPRequest {
    guard !request.method.isIdempotent, request.headerFields[.idempotencyKey] == nil else {
      return request
    }
    var keyed = request
    keyed.headerFields[.idempotencyKey] = UUID().uuidString.lowercased()
    return keyed
  }

  /// Sends with retries; a body is read again from its start on each attempt. Each decision
  /// goes to the call's `options.onRetry` and to this step's `onEvent`.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, if any.
  ///   - options: per-attempt options; `progress` restarts from zero on each attempt.
  /// - Returns: the first successful or non-retryable response, or the last one, with its body.
  /// - Throws: the last transport error, with `attempts` set.
  package func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    let keyed = Self.withIdempotencyKey(request)
    let context = keyed.summary
    let callObserver = options.onRetry
    let call = options.identifyingCall()
    let metrics = executor.metrics
    let clock = executor.clock
    let start = metrics.isEnabled ? clock.now : nil
    func ended(_ failure: CourierError?) {
      if let start { metrics.requestEnded(failure: failure, after: start.duration(to: clock.now)) }
    }
    do {
      // A body written to a sink is repeated only when the attempt never reached the server:
      // a second attempt would write over the partial file (the downloader resumes instead).
      let streams = options.responseSink != nil
      let (response, received, failure) = try await executor.run(
        safeToRepeat: keyed.isSafeToRepeat && !streams,
        readsOnly: (keyed.method == .get || keyed.method == .head) && !streams,
        logger: call.logger,
        onEvent: { event in
          onEvent(keyed, event)
          callObserver?(event)
        }
      ) { number in
        let (response, received) = try await base.send(
          keyed, body: body, options: call.forAttempt(number))
        let failure = ResponseClassifier.classify(
          response, body: received.bytes, attempts: number, context: context)
        if let failure, failure.isTransient {
          throw ResponseFailure(courierError: failure, response: response, body: received)
        }
        return (response, received, failure)
      }
      ended(failure)
      return (response, received)
    } catch let failure as ResponseFailure {
      ended(failure.courierError)
      return (failure.response, failure.body)
    } catch {
      ended(CourierError.wrapping(error))
      throw error
    }
  }
}

/// Carries a retryable HTTP failure through the executor while keeping the response.
struct ResponseFailure: CourierErrorCarrying, Sendable {
  var courierError: CourierError
  let response: HTTPResponse
  let body: ResponseBody
}
