import CourierDomain
import Testing

@Suite("RetryPolicy")
struct RetryPolicyTests {
  let policy = RetryPolicy()

  @Test("backoff ceilings grow ×2 from 2 s and stop at 20 s")
  func ceilings() {
    let ceilings = (1...8).map { policy.ceiling(afterAttempt: $0) }
    #expect(
      ceilings == [
        .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(20), .seconds(20),
        .seconds(20), .seconds(20),
      ])
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let error: CourierError
    let attempt: Int
    let elapsed: Duration
    let safe: Bool
    let jitter: Double
    let budget: Bool
    let expected: RetryDecision
    /// Whether a reply cut short may be asked for once more (a GET's first, decision 2436).
    var asksAgain = false
    var testDescription: String { name }
  }

  /// A reply that ended before its length, as both transports report it.
  static let truncated = CourierError(
    .invalidResponse, code: "reply_truncated", mayHaveReachedServer: true)

  static let rows: [Row] = [
    Row(
      name: "503 first attempt, jitter 0.5 → 1.5 s", error: CourierError(.overloaded, status: 503),
      attempt: 1, elapsed: .zero, safe: false, jitter: 0.5, budget: true,
      expected: .retry(after: .milliseconds(1500))),
    Row(
      name: "equal jitter 0 → half the ceiling, never at once",
      error: CourierError(.server, status: 502, mayHaveReachedServer: true), attempt: 2,
      elapsed: .zero, safe: true, jitter: 0, budget: true, expected: .retry(after: .seconds(2))),
    Row(
      name: "jitter 0.75 on attempt 3 → 7 s of 8", error: CourierError(.offline),
      attempt: 3, elapsed: .zero, safe: false, jitter: 0.75, budget: true,
      expected: .retry(after: .seconds(7))),
    Row(
      name: "422 never", error: CourierError(.business, status: 422, code: "image_too_large"),
      attempt: 1, elapsed: .zero, safe: true, jitter: 0.5, budget: true,
      expected: .giveUp(.notTransient)),
    Row(
      name: "401 never", error: CourierError(.unauthorized, status: 401), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true, expected: .giveUp(.notTransient)),
    Row(
      name: "409 conflict never", error: CourierError(.conflict, status: 409), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true, expected: .giveUp(.notTransient)),
    Row(
      name: "a captive portal's page: kept for later, not repeated now",
      error: CourierError(.notTheServer, status: 302, code: "redirected_elsewhere"), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true, expected: .giveUp(.notTheServer)),
    Row(
      name: "timeout on unkeyed POST never",
      error: CourierError(.timedOut, mayHaveReachedServer: true), attempt: 1, elapsed: .zero,
      safe: false, jitter: 0.5, budget: true, expected: .giveUp(.notSafeToRepeat)),
    Row(
      name: "timeout on keyed POST retried",
      error: CourierError(.timedOut, mayHaveReachedServer: true), attempt: 1, elapsed: .zero,
      safe: true, jitter: 1, budget: true, expected: .retry(after: .seconds(2))),
    Row(
      name: "refused connection on POST is safe", error: CourierError(.cannotReachHost), attempt: 1,
      elapsed: .zero, safe: false, jitter: 1, budget: true,
      expected: .retry(after: .seconds(2))),
    Row(
      name: "4 attempts in all", error: CourierError(.overloaded, status: 503), attempt: 4,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true, expected: .giveUp(.attemptsExhausted)),
    Row(
      name: "Retry-After beats a shorter backoff, spread past it by a quarter at draw 0.5",
      error: CourierError(.overloaded, status: 503, retryAfter: .seconds(3)), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true,
      expected: .retry(after: .milliseconds(3750))),
    Row(
      name: "Retry-After at draw 0 is exactly what the server asked",
      error: CourierError(.overloaded, status: 503, retryAfter: .seconds(3)), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0, budget: true, expected: .retry(after: .seconds(3))),
    Row(
      name: "Retry-After over the cap gives up",
      error: CourierError(.overloaded, status: 429, retryAfter: .seconds(3600)), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: true, expected: .giveUp(.retryAfterTooLong)),
    Row(
      name: "wait past the deadline gives up",
      error: CourierError(.overloaded, status: 503, retryAfter: .seconds(30)), attempt: 1,
      elapsed: .seconds(40), safe: true, jitter: 0.5, budget: true,
      expected: .giveUp(.deadlineExceeded)),
    Row(
      name: "budget spent gives up",
      error: CourierError(.server, status: 500, mayHaveReachedServer: true), attempt: 1,
      elapsed: .zero, safe: true, jitter: 0.5, budget: false, expected: .giveUp(.budgetExhausted)),
    Row(
      name: "idempotency_in_flight is transient",
      error: CourierError(.overloaded, status: 409, code: "idempotency_in_flight"), attempt: 1,
      elapsed: .zero, safe: true, jitter: 1, budget: true,
      expected: .retry(after: .seconds(2))),
    Row(
      name: "a GET's reply cut short is asked for once more", error: truncated, attempt: 1,
      elapsed: .zero, safe: true, jitter: 1, budget: true, expected: .retry(after: .seconds(2)),
      asksAgain: true),
    Row(
      name: "a reply cut short is not a passing fault: a write's is not sent again",
      error: truncated, attempt: 1, elapsed: .zero, safe: true, jitter: 1, budget: true,
      expected: .giveUp(.notTransient)),
    Row(
      name: "a GET's reply cut short, once more only within the attempts", error: truncated,
      attempt: 4, elapsed: .zero, safe: true, jitter: 1, budget: true,
      expected: .giveUp(.attemptsExhausted), asksAgain: true),
    Row(
      name: "a GET's reply cut short, once more only within the budget", error: truncated,
      attempt: 1, elapsed: .zero, safe: true, jitter: 1, budget: false,
      expected: .giveUp(.budgetExhausted), asksAgain: true),
    Row(
      name: "conflicting lengths are never asked for again",
      error: CourierError(.invalidResponse, code: "reply_length_conflict"), attempt: 1,
      elapsed: .zero, safe: true, jitter: 1, budget: true, expected: .giveUp(.notTransient),
      asksAgain: true),
  ]

  @Test("decisions", arguments: rows)
  func decides(_ row: Row) {
    let decision = policy.decide(
      after: row.error, attempt: row.attempt, elapsed: row.elapsed, safeToRepeat: row.safe,
      jitter: row.jitter, budgetAllows: row.budget, asksAgainIfCutShort: row.asksAgain)
    #expect(decision == row.expected)
  }

  @Test("delays lie between half the ceiling and the ceiling, whatever the draw")
  func boundedJitter() {
    for attempt in 1...3 {
      for draw in stride(from: 0.0, to: 1.0, by: 0.01) {
        guard
          case .retry(let wait) = policy.decide(
            after: CourierError(.server, status: 500), attempt: attempt, elapsed: .zero,
            safeToRepeat: true, jitter: draw)
        else {
          Issue.record("expected a retry")
          return
        }
        #expect(wait <= policy.ceiling(afterAttempt: attempt))
        #expect(wait >= policy.ceiling(afterAttempt: attempt) / 2)
      }
    }
  }
}
