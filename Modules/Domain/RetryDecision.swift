/// What to do after a failed attempt.
package enum RetryDecision: Sendable, Equatable {
  /// Wait, then try again.
  case retry(after: Duration)
  /// Stop and report the failure.
  case giveUp(GiveUpReason)
}
