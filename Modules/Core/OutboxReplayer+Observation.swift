import CourierDomain
import CourierPorts
import Logging

/// What the replayer logs and records itself (decisions 2203 and 2301): each pass where
/// `replay()` feeds its end to the machine, so the run loop's passes are seen as a façade's
/// are, with the backoff the machine armed after it; each delivery's lag where a window's answer
/// is decided (`ReplayWindowSender`). Nothing is timed when the metrics record nothing, and no
/// metadata is built for a logger that would drop it.
extension OutboxReplayer {
  /// The start of a pass on the replayer's clock, whatever that clock's type.
  struct PassTimer: Sendable {
    /// The time since the start.
    let elapsed: @Sendable () -> Duration
  }

  /// Starts timing on `clock`.
  static func instant<C: Clock<Duration>>(of clock: C) -> PassTimer {
    let start = clock.now
    return PassTimer { start.duration(to: clock.now) }
  }

  /// Records a pass's duration (nil when untimed) and logs what it did at `debug`: ended,
  /// cancelled, stopped, or stopped by a transient failure with the wait before the run loop's
  /// next pass (`courier.retry.delay`, when a loop runs to make it).
  /// - Parameters:
  ///   - report: what the pass did.
  ///   - duration: how long it took.
  ///   - retry: the backoff armed when the machine took the pass's end.
  func observe(_ report: ReplayReport, after duration: Duration?, retry: Duration?) {
    if let duration { metrics.replayEnded(after: duration) }
    guard logger.logs(.debug) else { return }
    var metadata: Logger.Metadata = [
      CourierLogKey.replaySent: "\(report.sent)",
      CourierLogKey.replayRejected: "\(report.rejected)",
      CourierLogKey.replayPending: "\(report.pending)",
    ]
    if report.parked > 0 { metadata[CourierLogKey.replayParked] = "\(report.parked)" }
    guard let stop = report.stoppedBy else {
      logger.debug("Replay pass ended", metadata: metadata)
      return
    }
    metadata[CourierLogKey.errorKind] = "\(stop.kind.rawValue)"
    if stop.kind == .cancelled {
      logger.debug("Replay pass cancelled", metadata: metadata)
    } else if stop.isTransient {
      if let retry { metadata[CourierLogKey.retryDelay] = "\(retry.seconds.fixed(digits: 3))" }
      logger.debug("Replay pass stopped by a transient failure", metadata: metadata)
    } else {
      logger.debug("Replay pass stopped", metadata: metadata)
    }
  }
}
