import Synchronization

/// Thins a stream of progress reports so a slow consumer is not flooded: a report passes when
/// the count moved by at least `granularity` bytes, or `interval` has passed since the last one
/// that passed, or the transfer reached its end or went back (a new attempt). A repeated count
/// never passes; `reset()` starts afresh, as if nothing had passed yet. Shared by the `Uploader`
/// (bytes) and the terminal interface (time); pure apart from the times it is given.
package final class ProgressThrottle: Sendable {
  /// The smallest move, in bytes, that lets a report through (nil: moves alone never do).
  package let granularity: Int64?
  /// The shortest time between two reports let through on time alone (nil: time never does).
  package let interval: Duration?
  private let last = Mutex<(sent: Int64, at: ContinuousClock.Instant?)>((-1, nil))

  /// Creates a throttle; give a granularity, an interval, or both.
  /// - Parameters:
  ///   - granularity: the smallest move in bytes that passes.
  ///   - interval: the shortest time between reports that pass on time alone.
  package init(granularity: Int64? = nil, interval: Duration? = nil) {
    self.granularity = granularity
    self.interval = interval
  }

  /// Whether to publish this report; when it returns true the report counts as the last one.
  /// - Parameters:
  ///   - sent: the bytes sent so far.
  ///   - total: the bytes to send in all.
  ///   - now: the current time (only read when there is an interval).
  /// - Returns: true to publish it.
  package func admit(sent: Int64, total: Int64, at now: ContinuousClock.Instant = .now) -> Bool {
    last.withLock { last in
      guard sent != last.sent else { return false }
      let moved = granularity.map { sent - max(last.sent, 0) >= $0 } ?? false
      let waited =
        interval.map { interval in last.at.map { now - $0 >= interval } ?? true } ?? false
      guard sent >= total || sent < last.sent || moved || waited else { return false }
      last = (sent, now)
      return true
    }
  }

  /// Forgets the last report, so the next one passes (a new attempt or phase begins).
  package func reset() { last.withLock { $0 = (-1, nil) } }
}
