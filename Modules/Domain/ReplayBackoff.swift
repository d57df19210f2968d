/// How long a watching sync engine waits before replaying again after a replay that a transient
/// failure stopped (503, timeout, server unreachable while the link is up). Exponential with
/// equal jitter (between half the ceiling and the ceiling), growing with each consecutive failed
/// replay, capped at 25 s so a device is back at most that long after its server; the server's
/// `Retry-After` is a floor, spread over up to half of itself. Pure: the failure count, the
/// `Retry-After` and the random draw are inputs. The figures come from the fleet simulation
/// (decision 2410, `Docs/benchmarks/fleet.md`).
///
/// This is the engine's second layer: each request is already retried a few times by the
/// client's `RetryPolicy` (seconds, under a shared budget). `ReplayBackoff` spaces out whole
/// replays over seconds, so a fleet that saw an outage drains after it without a storm.
package struct ReplayBackoff: Sendable, Equatable {
  /// The backoff ceiling after the first failed replay.
  package var baseDelay: Duration
  /// The factor the ceiling grows by after each further failed replay.
  package var multiplier: Double
  /// The largest backoff ceiling.
  package var maxDelay: Duration
  /// The longest `Retry-After` honoured as a floor; a longer one is cut to this.
  package var maxRetryAfter: Duration

  /// Creates a backoff. Defaults: 2 s base, ×2, 25 s cap, `Retry-After` honoured up to 1 h.
  /// - Parameters:
  ///   - baseDelay: the first ceiling.
  ///   - multiplier: the growth factor (at least 1).
  ///   - maxDelay: the largest ceiling.
  ///   - maxRetryAfter: the longest `Retry-After` honoured.
  package init(
    baseDelay: Duration = .seconds(2), multiplier: Double = 2, maxDelay: Duration = .seconds(25),
    maxRetryAfter: Duration = .seconds(3600)
  ) {
    self.baseDelay = max(.zero, baseDelay)
    self.multiplier = max(1, multiplier)
    self.maxDelay = max(self.baseDelay, maxDelay)
    self.maxRetryAfter = max(.zero, maxRetryAfter)
  }

  /// The backoff ceiling after `failures` consecutive failed replays.
  /// - Parameter failures: consecutive failed replays (1 after the first).
  /// - Returns: `min(maxDelay, baseDelay × multiplier^(failures−1))`.
  package func ceiling(afterFailures failures: Int) -> Duration {
    var ceiling = baseDelay.seconds
    var remaining = max(0, failures - 1)
    while remaining > 0 && ceiling < maxDelay.seconds {
      ceiling *= multiplier
      remaining -= 1
    }
    return min(maxDelay, .seconds(ceiling))
  }

  /// The wait before the next replay.
  /// - Parameters:
  ///   - failures: consecutive failed replays, this one included (1 after the first).
  ///   - retryAfter: the `Retry-After` of the failure that stopped the replay, if any.
  ///   - jitter: a uniform draw in `0..<1` (clamped to `0...1`).
  /// - Returns: `ceiling × (0.5 + 0.5 × jitter)`, at least `min(retryAfter, maxRetryAfter)`
  ///   spread by `1 + 0.5 × jitter`.
  package func delay(afterFailures failures: Int, retryAfter: Duration?, jitter: Double) -> Duration
  {
    let wait = ceiling(afterFailures: failures).equalJitter(jitter)
    guard let retryAfter else { return wait }
    return max(wait, min(max(retryAfter, .zero), maxRetryAfter).spreadPast(jitter))
  }
}
