import CourierDomain
import CourierPorts
import Logging

/// The logs and metrics of the network path (decision 2203): each change of the status a
/// monitor reports is counted (`courier_path_changes_total{status}`) and logged at `debug`
/// with `courier.path.status`. The first path a stream yields is where it starts, not a change.
package struct PathObservation: Sendable {
  /// Where changes are counted.
  package let metrics: CourierMetrics
  /// Where changes are logged.
  package let logger: Logger

  /// Observes paths.
  /// - Parameters:
  ///   - metrics: where changes are counted.
  ///   - logger: where changes are logged.
  package init(metrics: CourierMetrics, logger: Logger) {
    self.metrics = metrics
    self.logger = logger
  }

  /// Whether following a monitor records or logs anything.
  package var isEnabled: Bool { metrics.isEnabled || logger.logs(.debug) }

  /// Records the status changes of `monitor` until the task is cancelled (its updates end).
  /// - Parameter monitor: the monitor, run by someone else.
  package func follow(_ monitor: any PathMonitor) async {
    var last: PathStatus?
    for await path in monitor.updates() {
      defer { last = path.status }
      guard let previous = last, previous != path.status else { continue }
      changed(from: previous, to: path.status)
    }
  }

  /// Records one change.
  /// - Parameters:
  ///   - previous: the status before.
  ///   - status: the status now.
  package func changed(from previous: PathStatus, to status: PathStatus) {
    metrics.pathChanged(to: status)
    logger.debug(
      "Network path changed",
      metadata: [
        CourierLogKey.pathStatus: "\(status.rawValue)",
        CourierLogKey.pathPreviousStatus: "\(previous.rawValue)",
      ])
  }
}
