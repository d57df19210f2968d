import CourierDomain
import CourierPorts
import Logging

/// The logs and metrics of replay passes, taken around the replayer rather than inside it
/// (decision 2203): the pass a façade asks for (`SyncEngine.replay()`, a session's `sync()`)
/// is timed and logged, and the outbox gauges follow the store after it and the states a run
/// loop publishes. The replayer's own passes inside `run()` are not timed from here.
package struct ReplayObservation: Sendable {
  /// Where the pass and the outbox are recorded.
  package let metrics: CourierMetrics
  /// Where each pass is logged, at `debug`.
  package let logger: Logger
  /// The store whose outbox is measured.
  package let store: any LocalStore
  /// The ids of the queued uploads being sent now, for `courier_queued_uploads{state}`; nil
  /// where queued uploads are not followed (a sync engine of its own).
  package let sendingUploads: (@Sendable () -> Set<String>)?

  /// Observes passes over `store`.
  /// - Parameters:
  ///   - metrics: where the pass and the outbox are recorded.
  ///   - logger: where each pass is logged.
  ///   - store: the store whose outbox is measured.
  ///   - sendingUploads: the queued uploads being sent now; nil not to record queued uploads.
  package init(
    metrics: CourierMetrics, logger: Logger, store: any LocalStore,
    sendingUploads: (@Sendable () -> Set<String>)? = nil
  ) {
    self.metrics = metrics
    self.logger = logger
    self.store = store
    self.sendingUploads = sendingUploads
  }

  /// Observes nothing (a store's sending side made without a session).
  /// - Parameter store: the store.
  /// - Returns: the observation.
  package static func disabled(_ store: any LocalStore) -> ReplayObservation {
    ReplayObservation(metrics: .disabled, logger: .courierDiscarding, store: store)
  }

  /// Whether following a run loop's states records anything.
  package var isEnabled: Bool { metrics.isEnabled }

  /// Records the outbox gauges now, and the queued uploads' when they are followed; reads
  /// nothing when the metrics record nothing.
  package func recordOutbox() {
    guard metrics.isEnabled else { return }
    metrics.outbox(of: store)
    if let sendingUploads, let uploads = try? store.entries(in: QueuedUpload.collection) {
      metrics.queuedUploads(uploads, sending: sendingUploads())
    }
  }

  /// Records a pass that took `duration` (`courier_replay_duration_seconds`), the outbox after
  /// it, and logs what it did.
  /// - Parameters:
  ///   - report: what it did.
  ///   - duration: how long it took.
  package func ended(_ report: ReplayReport, after duration: Duration) {
    metrics.replayEnded(after: duration)
    recordOutbox()
    guard logger.logs(.debug) else { return }
    var metadata: Logger.Metadata = [
      CourierLogKey.replaySent: "\(report.sent)",
      CourierLogKey.replayRejected: "\(report.rejected)",
      CourierLogKey.replayPending: "\(report.pending)",
    ]
    if let stop = report.stoppedBy { metadata[CourierLogKey.errorKind] = "\(stop.kind.rawValue)" }
    logger.debug(
      report.stoppedBy == nil ? "Replay pass ended" : "Replay pass stopped by a transient failure",
      metadata: metadata)
  }

  /// Records the outbox each time a state says its count of waiting entries changed, until the
  /// stream ends or the task is cancelled.
  /// - Parameter states: a replayer's states.
  package func follow(_ states: AsyncStream<SyncState>) async {
    var last: Int?
    for await state in states where state.pendingCount != last {
      last = state.pendingCount
      recordOutbox()
    }
  }
}
