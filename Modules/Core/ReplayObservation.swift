import CourierDomain
import CourierPorts

/// The outbox gauges, taken around the replayer (decision 2203): after a pass a façade asks for
/// (`SyncEngine.replay()`, a session's `sync()`), after writes, discards and requeues, and as the
/// states a run loop publishes change. The passes themselves, a run loop's included, are logged
/// and timed by the replayer (decision 2301).
package struct ReplayObservation: Sendable {
  /// Where the outbox is recorded.
  package let metrics: CourierMetrics
  /// The store whose outbox is measured.
  package let store: any LocalStore
  /// The ids of the queued uploads being sent now, for `courier_queued_uploads{state}`; nil
  /// where queued uploads are not followed (a sync engine of its own).
  package let sendingUploads: (@Sendable () -> Set<String>)?

  /// Observes the outbox of `store`.
  /// - Parameters:
  ///   - metrics: where the outbox is recorded.
  ///   - store: the store whose outbox is measured.
  ///   - sendingUploads: the queued uploads being sent now; nil not to record queued uploads.
  package init(
    metrics: CourierMetrics, store: any LocalStore,
    sendingUploads: (@Sendable () -> Set<String>)? = nil
  ) {
    self.metrics = metrics
    self.store = store
    self.sendingUploads = sendingUploads
  }

  /// Observes nothing (a store's sending side made without a session).
  /// - Parameter store: the store.
  /// - Returns: the observation.
  package static func disabled(_ store: any LocalStore) -> ReplayObservation {
    ReplayObservation(metrics: .disabled, store: store)
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
