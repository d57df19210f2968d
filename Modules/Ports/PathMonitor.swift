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
  /// The path now, asked of the system once, without running the monitor: for a short command
  /// deciding whether trying the network is worth it. `currentPath` by default (a monitor that
  /// cannot ask says what it last heard, `unknown` when nothing).
  /// - Returns: the path.
  func snapshot() async -> NetworkPath
}

extension PathMonitor {
  /// What the monitor last heard: the default for a monitor that cannot ask the system once.
  /// - Returns: `currentPath`.
  public func snapshot() async -> NetworkPath { currentPath }
}
