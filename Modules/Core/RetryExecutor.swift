import CoreMetrics
import CourierDomain
import CourierPorts
import CourierSystem
import Logging
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension CourierError: CourierErrorCarrying {
  /// The error itself: a `CourierError` needs no unwrapping to be classified.
  package var courierError: CourierError {
    get { self }
    set { self = newValue }
  }
}

/// Runs an operation under a retry policy: transient failures are retried after a jittered
/// backoff on the injected clock; everything else ends at once. Stops at once on cancellation.
///
/// Each decision is logged to the logger given to ``run(safeToRepeat:logger:_:)`` (a
/// retry at `info`, giving up at `debug`, a success at `trace`, or `debug` after retries) and
/// counted in `metrics` (`courier_retries_total{reason}`,
/// `courier_retry_budget_refusals_total`; the article "Metrics and logging").
public struct RetryExecutor<C: Clock>: Sendable where C.Duration == Duration {
  /// The policy deciding which failures are retried, how often and after what delay.
  package let policy: RetryPolicy
  /// The clock waits are made on.
  package let clock: C
  /// The jitter source.
  package let random: any RandomSource
  /// The budget shared with other requests of the same client.
  package let budget: SharedRetryBudget
  /// Where the decisions are counted, and the calls of the steps that use this executor
  /// (`RetryingTransport`, the tus transfer).
  package let metrics: CourierMetrics

  /// Creates an executor.
  /// - Parameters:
  ///   - policy: the policy.
  ///   - clock: the clock to wait on.
  ///   - random: the jitter source.
  ///   - metrics: where retries, budget refusals and (through the steps that use this
  ///     executor) calls are counted; the global system's factory by default.
  public init(
    policy: RetryPolicy, clock: C, random: any RandomSource = SystemRandomSource(),
    metrics: any MetricsFactory = MetricsSystem.factory
  ) {
    self.init(
      policy: policy, clock: clock, random: random, budget: SharedRetryBudget(),
      metrics: CourierMetrics(factory: metrics))
  }

  /// Creates an executor whose retries draw on `budget`, shared with other executors.
  /// - Parameters:
  ///   - policy: the policy.
  ///   - clock: the clock to wait on.
  ///   - random: the jitter source.
  ///   - budget: the shared retry budget.
  ///   - metrics: where retries, budget refusals and calls are counted.
  package init(
    policy: RetryPolicy, clock: C, random: any RandomSource = SystemRandomSource(),
    budget: SharedRetryBudget, metrics: any MetricsFactory = MetricsSystem.factory
  ) {
    self.init(
      policy: policy, clock: clock, random: random, budget: budget,
      metrics: CourierMetrics(factory: metrics))
  }

  /// Creates an executor that records in metrics shared with the rest of a session.
  package init(
    policy: RetryPolicy, clock: C, random: any RandomSource = SystemRandomSource(),
    budget: SharedRetryBudget = SharedRetryBudget(), metrics: CourierMetrics
  ) {
    self.policy = policy
    self.clock = clock
    self.random = random
    self.budget = budget
    self.metrics = metrics
  }

  /// Runs `operation` until it succeeds or the policy gives up, waiting the policy's jittered
  /// backoff (or the server's `Retry-After`) on the clock between attempts.
  /// - Parameters:
  ///   - safeToRepeat: whether the operation is idempotent (or carries an idempotency key).
  ///   - logger: where each decision is logged, with `courier.attempt` (the attempt it
  ///     follows) and the logger's own metadata (a call's `courier.request.id`); nowhere by
  ///     default.
  ///   - operation: the work; it receives the attempt number (from 1) and throws
  ///     `CourierError` on failure.
  /// - Returns: the operation's result.
  /// - Throws: the last `CourierError`, its `attempts` set; `cancelled` on cancellation.
  public func run<T: Sendable>(
    safeToRepeat: Bool, logger: Logger = .courierDiscarding,
    _ operation: @Sendable (_ attempt: Int) async throws -> T
  ) async throws -> T {
    try await run(safeToRepeat: safeToRepeat, logger: logger, onEvent: { _ in }, operation)
  }

  /// Runs `operation` as ``run(safeToRepeat:logger:_:)`` does, telling `onEvent` each decision.
  /// - Parameters:
  ///   - safeToRepeat: whether the operation is idempotent (or carries an idempotency key).
  ///   - readsOnly: whether the operation only reads (a `GET`, a `HEAD`): the first reply of it
  ///     cut short of its length is then asked for once more (decision 2436).
  ///   - logger: where each decision is logged.
  ///   - onEvent: receives each decision.
  ///   - operation: the work; it receives the attempt number (from 1).
  /// - Returns: the operation's result.
  /// - Throws: the last error (a `CourierError`, or the operation's own `CourierErrorCarrying`
  ///   error), its `attempts` set; `cancelled` on cancellation.
  package func run<T: Sendable>(
    safeToRepeat: Bool, readsOnly: Bool = false, logger: Logger = .courierDiscarding,
    onEvent: @Sendable (RetryEvent) -> Void,
    _ operation: @Sendable (_ attempt: Int) async throws -> T
  ) async throws -> T {
    func report(_ event: RetryEvent) {
      Self.record(event, logger: logger, metrics: metrics)
      onEvent(event)
    }
    let start = clock.now
    var attempt = 0
    var cutShortBefore = false
    while true {
      attempt += 1
      if Task.isCancelled { throw CourierError(.cancelled, attempts: attempt - 1) }
      report(.attemptStarted(attempt: attempt))
      do {
        let value = try await operation(attempt)
        budget.recordSuccess()
        report(.succeeded(attempts: attempt))
        return value
      } catch {
        var carried: any CourierErrorCarrying =
          (error as? any CourierErrorCarrying) ?? CourierError.wrapping(error)
        var failure = carried.courierError
        failure.attempts = attempt
        carried.courierError = failure
        if failure.kind == .cancelled || Task.isCancelled {
          failure.kind = .cancelled
          throw failure
        }
        if failure.isTransient { budget.recordFailure() }
        let decision = policy.decide(
          after: failure, attempt: attempt, elapsed: start.duration(to: clock.now),
          safeToRepeat: safeToRepeat, jitter: random.next(), budgetAllows: budget.allowsRetry,
          asksAgainIfCutShort: readsOnly && !cutShortBefore)
        if failure.isTruncatedReply { cutShortBefore = true }
        switch decision {
        case .giveUp(let reason):
          report(.gaveUp(attempts: attempt, reason: reason, error: failure))
          throw carried
        case .retry(let delay):
          report(
            .retrying(
              attempt: attempt, maxAttempts: policy.maxAttempts, delay: delay, error: failure))
          do {
            try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
          } catch {
            throw CourierError(.cancelled, attempts: attempt, context: failure.context)
          }
        }
      }
    }
  }
}

extension RetryExecutor {
  /// Logs and counts one decision. The message is the line `courier --verbose` has always
  /// printed (`RetryEvent.humanDescription`), one line whatever the server said.
  fileprivate static func record(_ event: RetryEvent, logger: Logger, metrics: CourierMetrics) {
    switch event {
    case .attemptStarted:
      return
    case .retrying(let attempt, _, let delay, let error):
      metrics.retried(after: error.kind)
      logger.info(
        "\(LogText.escaped(event.humanDescription))",
        metadata: [
          CourierLogKey.attempt: "\(attempt)", CourierLogKey.errorKind: "\(error.kind.rawValue)",
          CourierLogKey.retryDelay: "\(delay.seconds.fixed(digits: 3))",
        ])
    case .gaveUp(let attempts, let reason, let error):
      if reason == .budgetExhausted { metrics.retryBudgetRefused() }
      logger.debug(
        "\(LogText.escaped(event.humanDescription))",
        metadata: [
          CourierLogKey.attempt: "\(attempts)", CourierLogKey.errorKind: "\(error.kind.rawValue)",
          CourierLogKey.giveUpReason: "\(reason.rawValue)",
        ])
    case .succeeded(let attempts):
      logger.log(
        level: attempts == 1 ? .trace : .debug, "\(event.humanDescription)",
        metadata: [CourierLogKey.attempt: "\(attempts)"])
    }
  }
}
