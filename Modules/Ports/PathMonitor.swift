import CourierDomain

/// Watches the device's network path. A hint for the interface and for triggering replays,
/// never a gate that blocks a request.
public protocol PathMonitor: Sendable {
  /// A new stream for each call: it yields the current path first, then every change, keeping
  /// only the newest value for a slow consumer.
  /// - Returns: the stream.
  func updates() -> AsyncStream<NetworkPath>

  /// The latest path (`unknown` before anything was heard).
  var currentPath: NetworkPath { get }

  /// Watches until the calling task is cancelled, then releases its resources.
  /// - Throws: when the monitor cannot start (no permission, no socket).
  func run() async throws
}
