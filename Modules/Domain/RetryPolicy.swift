/// Exponential backoff with equal jitter, for transient failures only. Pure: the random draw,
/// the elapsed time and the budget are inputs.
///
/// Each wait is drawn between half its ceiling and the ceiling, so no retry follows its failure
/// at once: a fleet that failed together does not retry in the same second (decision 2410).
public struct RetryPolicy: Sendable, Equatable {
  /// Attempts in all, the first one included.
  package var maxAttempts: Int
  /// The backoff ceiling before the first retry.
  package var baseDelay: Duration
  /// The factor the ceiling grows by after each attempt.
  package var multiplier: Double
  /// The largest backoff ceiling.
  package var maxDelay: Duration
  /// The overall time the operation may take, waits included; nil for none.
  package var deadline: Duration?
  /// The longest `Retry-After` honoured; a longer one ends the retries.
  package var maxRetryAfter: Duration

  /// Creates a policy. Defaults: 4 attempts, 2 s base, ×2, 20 s cap, 60 s deadline.
  /// - Parameters:
  ///   - maxAttempts: attempts in all.
  ///   - baseDelay: the first backoff ceiling.
  ///   - multiplier: the growth factor.
  ///   - maxDelay: the largest ceiling.
  ///   - deadline: the overall deadline.
  ///   - maxRetryAfter: the longest `Retry-After` honoured.
  public init(
    maxAttempts: Int = 4, baseDelay: Duration = .seconds(2), multiplier: Double = 2,
    maxDelay: Duration = .seconds(20), deadline: Duration? = .seconds(60),
    maxRetryAfter: Duration = .seconds(60)
  ) {
    self.maxAttempts = max(1, maxAttempts)
    self.baseDelay = baseDelay
    self.multiplier = max(1, multiplier)
    self.maxDelay = maxDelay
    self.deadline = deadline
    self.maxRetryAfter = maxRetryAfter
  }

  /// No retries at all.
  package static let none = RetryPolicy(maxAttempts: 1)

  /// The backoff ceiling before retry number `attempt` (1 for the first retry).
  /// - Parameter attempt: the number of attempts already made.
  /// - Returns: `min(maxDelay, baseDelay × multiplier^(attempt−1))`.
  package func ceiling(afterAttempt attempt: Int) -> Duration {
    let factor = pow(multiplier, Double(max(0, attempt - 1)))
    let base = baseDelay.seconds * factor
    return min(maxDelay, .seconds(base.isFinite ? base : maxDelay.seconds))
  }

  /// Decides what follows a failed attempt.
  /// - Parameters:
  ///   - error: the failure.
  ///   - attempt: attempts made so far (1 after the first).
  ///   - elapsed: time since the first attempt started.
  ///   - safeToRepeat: whether the request is idempotent or carries an `Idempotency-Key`.
  ///   - jitter: a uniform draw in `0..<1`.
  ///   - budgetAllows: whether the client's shared retry budget has a token.
  ///   - asksAgainIfCutShort: whether a reply cut short of its length (`reply_truncated`) is
  ///     asked for once more: true for a request that only reads (`GET`, `HEAD`) none of whose
  ///     earlier replies was cut short (decision 2436). A write's is never: the server answered
  ///     it, and the outbox keeps it pending to send later with its Idempotency-Key.
  /// - Returns: the decision.
  package func decide(
    after error: CourierError, attempt: Int, elapsed: Duration, safeToRepeat: Bool,
    jitter: Double, budgetAllows: Bool = true, asksAgainIfCutShort: Bool = false
  ) -> RetryDecision {
    let askedAgain = asksAgainIfCutShort && error.isTruncatedReply
    guard error.isTransient || askedAgain else { return .giveUp(.notTransient) }
    if error.kind == .notTheServer { return .giveUp(.notTheServer) }
    if error.mayHaveReachedServer && !safeToRepeat { return .giveUp(.notSafeToRepeat) }
    guard attempt < maxAttempts else { return .giveUp(.attemptsExhausted) }
    var wait = ceiling(afterAttempt: attempt).equalJitter(jitter)
    if let retryAfter = error.retryAfter {
      guard retryAfter <= maxRetryAfter else { return .giveUp(.retryAfterTooLong) }
      wait = max(wait, retryAfter.spreadPast(jitter))
    }
    if let deadline, elapsed + wait >= deadline { return .giveUp(.deadlineExceeded) }
    guard budgetAllows else { return .giveUp(.budgetExhausted) }
    return .retry(after: wait)
  }
}

extension Duration {
  /// Equal jitter: a wait between half this ceiling and the ceiling, from a draw in `0..<1`
  /// (clamped; a draw that is not finite counts as 0).
  package func equalJitter(_ draw: Double) -> Duration {
    self * (0.5 + 0.5 * Self.clamped(draw))
  }

  /// A server's `Retry-After`, spread over up to half of itself past it, so clients told the
  /// same value do not come back in the same instant. Never shorter than the server asked.
  package func spreadPast(_ draw: Double) -> Duration {
    max(.zero, self) * (1 + 0.5 * Self.clamped(draw))
  }

  private static func clamped(_ draw: Double) -> Double {
    draw.isFinite ? min(max(draw, 0), 1) : 0
  }

  /// The duration in seconds, as a floating-point number.
  package var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}

private func pow(_ base: Double, _ exponent: Double) -> Double {
  var result = 1.0
  var remaining = Int(exponent)
  while remaining > 0 && result.isFinite {
    result *= base
    remaining -= 1
  }
  return result
}
