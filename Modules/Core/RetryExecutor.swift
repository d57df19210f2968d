import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension CourierError: CourierErrorCarrying {
  /// The error itself: a `CourierError` needs no unwrapping to be classified.
  public var courierError: CourierError {
    get { self }
    set { self = newValue }
  }
}

/// Runs an operation under a retry policy: transient failures are retried after a jittered
/// backoff on the injected clock; everything else ends at once. Stops at once on cancellation.
public struct RetryExecutor<C: Clock>: Sendable where C.Duration == Duration {
  /// The policy deciding which failures are retried, how often and after what delay.
  public let policy: RetryPolicy
  /// The clock waits are made on.
  public let clock: C
  /// The jitter source.
  public let random: any RandomSource
  /// The budget shared with other requests of the same client.
  public let budget: SharedRetryBudget

  /// Creates an executor.
  /// - Parameters:
  ///   - policy: the policy.
  ///   - clock: the clock to wait on.
  ///   - random: the jitter source.
  ///   - budget: the shared retry budget.
  public init(
    policy: RetryPolicy, clock: C, random: any RandomSource = SystemRandomSource(),
    budget: SharedRetryBudget = SharedRetryBudget()
  ) {
    self.policy = policy
    self.clock = clock
    self.random = random
    self.budget = budget
  }

  /// Runs `operation` until it succeeds or the policy gives up.
  /// - Parameters:
  ///   - safeToRepeat: whether the operation is idempotent (or carries an idempotency key).
  ///   - onEvent: receives each decision.
  ///   - operation: the work; it receives the attempt number (from 1) and throws
  ///     `CourierError` on failure.
  /// - Returns: the operation's result.
  /// - Throws: the last error (a `CourierError`, or the operation's own `CourierErrorCarrying`
  ///   error), its `attempts` set; `cancelled` on cancellation.
  public func run<T: Sendable>(
    safeToRepeat: Bool, onEvent: @Sendable (RetryEvent) -> Void = { _ in },
    _ operation: @Sendable (_ attempt: Int) async throws -> T
  ) async throws -> T {
    let start = clock.now
    var attempt = 0
    while true {
      attempt += 1
      if Task.isCancelled { throw CourierError(.cancelled, attempts: attempt - 1) }
      onEvent(.attemptStarted(attempt: attempt))
      do {
        let value = try await operation(attempt)
        budget.recordSuccess()
        onEvent(.succeeded(attempts: attempt))
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
          safeToRepeat: safeToRepeat, jitter: random.next(), budgetAllows: budget.allowsRetry)
        switch decision {
        case .giveUp(let reason):
          onEvent(.gaveUp(attempts: attempt, reason: reason, error: failure))
          throw carried
        case .retry(let delay):
          onEvent(
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
