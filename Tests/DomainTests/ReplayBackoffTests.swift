import CourierDomain
import Testing

@Suite("ReplayBackoff")
struct ReplayBackoffTests {
  let backoff = ReplayBackoff()

  @Test("ceilings grow ×2 from 2 s per failed replay and stop at 25 s")
  func ceilings() {
    let ceilings = [1, 2, 3, 4, 8, 9, 10, 40, Int.max].map { backoff.ceiling(afterFailures: $0) }
    #expect(
      ceilings == [
        .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(25), .seconds(25),
        .seconds(25), .seconds(25), .seconds(25),
      ])
  }

  @Test("zero or negative failures count as the first")
  func nonPositiveFailures() {
    #expect(backoff.ceiling(afterFailures: 0) == .seconds(2))
    #expect(backoff.ceiling(afterFailures: -3) == .seconds(2))
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let failures: Int
    let retryAfter: Duration?
    let jitter: Double
    let expected: Duration
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "first failure, jitter 0.5 → 1.5 s", failures: 1, retryAfter: nil, jitter: 0.5,
      expected: .milliseconds(1500)),
    Row(
      name: "equal jitter 0 → half the ceiling, never at once", failures: 5, retryAfter: nil,
      jitter: 0, expected: .milliseconds(12500)),
    Row(
      name: "third failure, jitter 0.75 → 7 s of 8", failures: 3, retryAfter: nil, jitter: 0.75,
      expected: .seconds(7)),
    Row(
      name: "capped: 20th failure, jitter 0.5 → 18.75 s", failures: 20, retryAfter: nil,
      jitter: 0.5, expected: .milliseconds(18750)),
    Row(
      name: "Retry-After is a floor over a small draw, spread by a twentieth at 0.1",
      failures: 1, retryAfter: .seconds(7), jitter: 0.1, expected: .milliseconds(7350)),
    Row(
      name: "a larger draw wins over Retry-After", failures: 6, retryAfter: .seconds(1),
      jitter: 0.5, expected: .milliseconds(18750)),
    Row(
      name: "Retry-After past the cap is honoured as a floor", failures: 1,
      retryAfter: .seconds(600), jitter: 0, expected: .seconds(600)),
    Row(
      name: "Retry-After past the cap, spread by half at a draw near 1", failures: 1,
      retryAfter: .seconds(600), jitter: 1, expected: .seconds(900)),
    Row(
      name: "Retry-After over 1 h is cut to 1 h", failures: 1, retryAfter: .seconds(86_400),
      jitter: 0, expected: .seconds(3600)),
    Row(
      name: "a draw above 1 is clamped", failures: 2, retryAfter: nil, jitter: 7,
      expected: .seconds(4)),
    Row(
      name: "a negative draw is clamped", failures: 2, retryAfter: nil, jitter: -1,
      expected: .seconds(2)),
    Row(
      name: "a NaN draw counts as 0", failures: 2, retryAfter: nil, jitter: .nan,
      expected: .seconds(2)),
  ]

  @Test("delay table", arguments: rows)
  func delays(_ row: Row) {
    #expect(
      backoff.delay(afterFailures: row.failures, retryAfter: row.retryAfter, jitter: row.jitter)
        == row.expected)
  }

  @Test("a fleet that failed together leaves the second it failed in, whatever the draw")
  func neverAtOnce() {
    for draw in stride(from: 0.0, through: 1.0, by: 0.01) {
      #expect(backoff.delay(afterFailures: 1, retryAfter: nil, jitter: draw) >= .seconds(1))
    }
  }

  @Test("settings are kept sane: multiplier ≥ 1, cap ≥ base")
  func sanitised() {
    let odd = ReplayBackoff(
      baseDelay: .seconds(10), multiplier: 0.5, maxDelay: .seconds(2), maxRetryAfter: .seconds(-1))
    #expect(odd.multiplier == 1)
    #expect(odd.maxDelay == .seconds(10))
    #expect(odd.ceiling(afterFailures: 5) == .seconds(10))
    #expect(odd.delay(afterFailures: 1, retryAfter: .seconds(30), jitter: 0) == .seconds(5))
  }
}
