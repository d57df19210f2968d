import CoreMetrics
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Courier's metrics in one place (decision 2203; the DocC article "Metrics and logging" lists
/// them): every label and dimension, and the handles, made from the factory a component was
/// given with swift-metrics' `factory:` initialisers (never the global system's) the first
/// time each is recorded, then kept.
///
/// Given swift-metrics' no-op factory (what `MetricsSystem.factory` is until an application
/// bootstraps a backend), it is disabled: every call returns at once, no handle is made, and
/// nothing is measured that only a metric would use.
package final class CourierMetrics: Sendable {
  // MARK: Labels

  /// Counter: calls of the request pipeline, one per call whatever its attempts, by outcome:
  /// `success`, or the kind of the failure that ended it (`CourierError.Kind`).
  package static let requests = "courier_requests_total"
  /// Timer: how long each call took, its attempts and the waits between them included.
  package static let requestDuration = "courier_request_duration_seconds"
  /// Counter: attempts the retry step made again, by the kind of failure that led to it.
  package static let retries = "courier_retries_total"
  /// Counter: retries the shared retry budget refused (too many failures across calls).
  package static let retryBudgetRefusals = "courier_retry_budget_refusals_total"
  /// Counter: request body bytes sent, every attempt's.
  package static let bytesSent = "courier_bytes_sent_total"
  /// Counter: bytes a resumed upload did not send again (the server held them already).
  package static let bytesResumed = "courier_bytes_resumed_total"
  /// Gauge: outbox entries waiting to be sent.
  package static let outboxDepth = "courier_outbox_depth"
  /// Gauge: when the oldest waiting entry was committed, in seconds since 1970; 0 when none
  /// waits. Its age is now minus this, right between two updates.
  package static let outboxOldestPending = "courier_outbox_oldest_pending_timestamp_seconds"
  /// Timer: how long a replay pass took.
  package static let replayDuration = "courier_replay_duration_seconds"
  /// Timer: from a write's commit to the answer that proved its delivery.
  package static let replayLag = "courier_replay_lag_seconds"
  /// Gauge: queued uploads in the outbox, by state (`waiting`, `sending`, `rejected`).
  package static let queuedUploads = "courier_queued_uploads"
  /// Counter: changes of the network path's status, by the status it changed to.
  package static let pathChanges = "courier_path_changes_total"

  // MARK: Dimensions

  /// How a call ended: `success` or a `CourierError.Kind` raw value.
  package static let outcome = "outcome"
  /// The `CourierError.Kind` raw value of the failure a retry follows.
  package static let reason = "reason"
  /// A queued upload's state: `waiting`, `sending` or `rejected`.
  package static let state = "state"
  /// A `PathStatus` raw value.
  package static let status = "status"
  /// The outcome of a call that ended well.
  package static let success = "success"

  // MARK: -

  /// The factory the handles come from.
  package let factory: any MetricsFactory
  /// False for swift-metrics' no-op factory: nothing is recorded or measured then.
  package let isEnabled: Bool
  private let counters = Mutex<[String: Counter]>([:])
  private let gauges = Mutex<[String: Gauge]>([:])
  private let timers = Mutex<[String: CoreMetrics.Timer]>([:])

  /// Metrics made by `factory`.
  /// - Parameter factory: the application's backend (`MetricsSystem.factory` by default in
  ///   Courier's public initialisers), or a `TestMetrics` in a test.
  package init(factory: any MetricsFactory) {
    self.factory = factory
    isEnabled = !(factory is NOOPMetricsHandler)
  }

  /// Metrics that record nothing.
  package static let disabled = CourierMetrics(factory: NOOPMetricsHandler.instance)

  // MARK: Recording

  /// A call of the pipeline ended.
  /// - Parameters:
  ///   - outcome: ``success`` or the failure's kind.
  ///   - duration: how long it took, attempts and waits included.
  package func requestEnded(_ outcome: String, after duration: Duration) {
    guard isEnabled else { return }
    counter(Self.requests, Self.outcome, outcome).increment()
    timer(Self.requestDuration).recordNanoseconds(duration.nanoseconds)
  }

  /// A call of the pipeline ended: `success` when `failure` is nil.
  /// - Parameters:
  ///   - failure: the failure that ended it; nil for a success.
  ///   - duration: how long it took.
  package func requestEnded(failure: CourierError?, after duration: Duration) {
    requestEnded(failure?.kind.rawValue ?? Self.success, after: duration)
  }

  /// The retry step decided to make another attempt.
  /// - Parameter reason: the kind of the failure it follows.
  package func retried(after reason: CourierError.Kind) {
    guard isEnabled else { return }
    counter(Self.retries, Self.reason, reason.rawValue).increment()
  }

  /// The shared retry budget refused a retry.
  package func retryBudgetRefused() {
    guard isEnabled else { return }
    counter(Self.retryBudgetRefusals).increment()
  }

  /// Request body bytes went out.
  /// - Parameter bytes: how many.
  package func sent(bytes: Int64) {
    guard isEnabled, bytes > 0 else { return }
    counter(Self.bytesSent).increment(by: bytes)
  }

  /// A resumed upload went on from bytes the server already held.
  /// - Parameter bytes: how many it did not send again.
  package func resumed(bytes: Int64) {
    guard isEnabled, bytes > 0 else { return }
    counter(Self.bytesResumed).increment(by: bytes)
  }

  /// A replay pass ended.
  /// - Parameter duration: how long it took.
  package func replayEnded(after duration: Duration) {
    guard isEnabled else { return }
    timer(Self.replayDuration).recordNanoseconds(duration.nanoseconds)
  }

  /// An outbox entry's delivery was proven.
  /// - Parameters:
  ///   - committed: when the write was committed (`OutboxOperation.enqueuedAt`).
  ///   - now: when the proof came.
  package func delivered(committedAt committed: Date, now: Date) {
    guard isEnabled else { return }
    let lag = max(0, now.timeIntervalSince(committed))
    timer(Self.replayLag).recordNanoseconds(Int64((lag * 1e9).rounded()))
  }

  /// The outbox now.
  /// - Parameters:
  ///   - pending: entries waiting to be sent.
  ///   - oldest: when the oldest of them was committed; nil when none waits (or unknown, with
  ///     `pending` above 0: the gauge is left as it is).
  package func outbox(pending: Int, oldestCommittedAt oldest: Date?) {
    guard isEnabled else { return }
    gauge(Self.outboxDepth).record(pending)
    if let oldest {
      gauge(Self.outboxOldestPending).record(oldest.timeIntervalSince1970)
    } else if pending == 0 {
      gauge(Self.outboxOldestPending).record(0)
    }
  }

  /// The outbox now, from its entries (every collection's, in outbox order).
  /// - Parameter entries: the entries.
  package func outbox(_ entries: [OutboxEntry]) {
    guard isEnabled else { return }
    let pending = entries.lazy.filter(\.state.isPending)
    outbox(
      pending: pending.count,
      oldestCommittedAt: pending.map(\.operation.enqueuedAt).min())
  }

  /// The outbox now, read from the store (its pending entries): after a pass, a discard, a
  /// requeue. Nothing is read when disabled; a store that cannot be read leaves the gauges.
  /// - Parameter store: the local store.
  package func outbox(of store: any LocalStore) {
    guard isEnabled, let pending = try? store.pending() else { return }
    outbox(pending: pending.count, oldestCommittedAt: pending.map(\.operation.enqueuedAt).min())
  }

  /// The queued uploads now, by state.
  /// - Parameters:
  ///   - entries: the outbox entries of the uploads collection.
  ///   - sending: the ids of the uploads being sent now.
  package func queuedUploads(_ entries: [OutboxEntry], sending: Set<String>) {
    guard isEnabled else { return }
    var waiting = 0
    var moving = 0
    var rejected = 0
    for entry in entries {
      if !entry.state.isPending {
        rejected += 1
      } else if sending.contains(entry.key.id) {
        moving += 1
      } else {
        waiting += 1
      }
    }
    gauge(Self.queuedUploads, Self.state, "waiting").record(waiting)
    gauge(Self.queuedUploads, Self.state, "sending").record(moving)
    gauge(Self.queuedUploads, Self.state, "rejected").record(rejected)
  }

  /// The network path's status changed.
  /// - Parameter status: the new status.
  package func pathChanged(to status: PathStatus) {
    guard isEnabled else { return }
    counter(Self.pathChanges, Self.status, status.rawValue).increment()
  }

  // MARK: Handles

  private func counter(_ label: String, _ dimension: String? = nil, _ value: String = "")
    -> Counter
  {
    counters.withLock { made in
      let key = dimension == nil ? label : label + "\u{0}" + value
      if let counter = made[key] { return counter }
      let counter = Counter(
        label: label, dimensions: dimension.map { [($0, value)] } ?? [], factory: factory)
      made[key] = counter
      return counter
    }
  }

  private func gauge(_ label: String, _ dimension: String? = nil, _ value: String = "") -> Gauge {
    gauges.withLock { made in
      let key = dimension == nil ? label : label + "\u{0}" + value
      if let gauge = made[key] { return gauge }
      let gauge = Gauge(
        label: label, dimensions: dimension.map { [($0, value)] } ?? [], factory: factory)
      made[key] = gauge
      return gauge
    }
  }

  private func timer(_ label: String) -> CoreMetrics.Timer {
    timers.withLock { made in
      if let timer = made[label] { return timer }
      let timer = CoreMetrics.Timer(
        label: label, dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
      made[label] = timer
      return timer
    }
  }
}

extension Duration {
  /// The duration in whole nanoseconds, for a metrics timer (saturating past ±292 years).
  var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return seconds < 0 ? .min : .max }
    return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
      ? (seconds < 0 ? .min : .max) : whole + attoseconds / 1_000_000_000
  }
}
