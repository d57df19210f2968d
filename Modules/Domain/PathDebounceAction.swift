/// What the debouncer's driver must do.
package enum PathDebounceAction: Sendable, Hashable {
  /// Nothing.
  case none
  /// Publish this path now.
  case publish(NetworkPath)
  /// Start (or restart) the one timer: call `fire(token)` after the duration.
  case startTimer(token: UInt64, after: Duration)
  /// Cancel the timer: the flap settled back on the published path.
  case cancelTimer
}
