import CourierDomain
import CourierNetlink
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The network path as the session follows it: the current one, each change, and whether trying
/// the server now is pointless. A hint for an interface and for replays: requests are never held
/// back because of it. Reach it as ``CourierSession/paths``.
///
/// ```swift
/// for await path in courier.paths.updates() { print(path.status) }
/// ```
public struct NetworkPaths: Sendable {
  /// The path monitor the session follows: the configured one, or a smoothed one over it.
  package let monitor: any PathMonitor
  /// The configured monitor without the OS's facts (`CourierEnvironment.linkMonitor`), asked
  /// for one snapshot by ``serverIsUnreachable()``.
  private let system: any PathMonitor
  /// The monitor's one run, shared with the session's `watch()`.
  private let run: SharedRun
  private let baseURL: URL

  init(monitor: any PathMonitor, system: any PathMonitor, run: SharedRun, baseURL: URL) {
    self.monitor = monitor
    self.system = system
    self.run = run
    self.baseURL = baseURL
  }

  /// The current path first, then each change, for as long as the stream is iterated (the
  /// monitor runs while someone listens).
  /// - Returns: the paths.
  public func updates() -> AsyncStream<NetworkPath> {
    let (monitor, run) = (monitor, run)
    let (stream, continuation) = AsyncStream.makeStream(of: NetworkPath.self)
    let task = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await run.run() }
        group.addTask {
          for await path in monitor.updates() { continuation.yield(path) }
        }
        await group.next()
        group.cancelAll()
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// The network path now (`.unknown` before the monitor has run).
  public var current: NetworkPath { monitor.currentPath }

  /// Whether trying the server now is pointless: the system, asked once
  /// (`PathMonitor.snapshot()`), has no usable path, or, for a server on this machine (which
  /// needs no route), its loopback link is down. A hint for skipping an automatic send, never a
  /// reason to refuse one asked for.
  /// - Returns: true when the path is known to be down for this server.
  public func serverIsUnreachable() async -> Bool {
    if let host = baseURL.host, Self.isLoopback(host) { return !LoopbackLink.isUp() }
    let status = await system.snapshot().status
    return status == .unsatisfied || status == .requiresConnection
  }

  /// Whether a host names this machine (`localhost`, `127.x.y.z`, `::1`).
  static func isLoopback(_ host: String) -> Bool {
    // The brackets of an IPv6 literal trimmed by hand: Foundation's `trimmingCharacters(in:)`
    // with a `CharacterSet` was a tenth of what an offline `articles add` cost.
    var host = Substring(host.lowercased())
    while let first = host.first, first == "[" || first == "]" { host.removeFirst() }
    while let last = host.last, last == "[" || last == "]" { host.removeLast() }
    return host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
      || host.hasPrefix("127.")
  }
}
