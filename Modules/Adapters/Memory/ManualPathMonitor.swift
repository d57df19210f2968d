import CourierDomain
import CourierPorts
import Synchronization

/// A path monitor driven by a test: `send(_:)` plays an event, `restart()` starts a new
/// generation. It applies the same rules as the real monitors (stale generations and repeats
/// publish nothing), so code under test sees what it would see in production.
public final class ManualPathMonitor: PathMonitor {
  private let broadcaster = PathBroadcaster()
  private let runs = Mutex((started: 0, active: 0))

  /// Creates a monitor that has heard nothing (`unknown`, generation 0).
  public init() {}

  /// A new stream: the current path first, then every change, newest only for a slow consumer.
  /// - Returns: the stream.
  public func updates() -> AsyncStream<NetworkPath> { broadcaster.updates() }

  /// The latest path.
  public var currentPath: NetworkPath { broadcaster.current }

  /// The generation whose events are accepted.
  package var generation: UInt64 { broadcaster.generation }

  /// How many `updates()` streams are open.
  package var subscriberCount: Int { broadcaster.subscriberCount }

  /// How many times `run()` was called, and how many calls are still running.
  package var runCount: (started: Int, active: Int) { runs.withLock { $0 } }

  /// Plays an event as a monitor would deliver it.
  /// - Parameter path: the event, stamped with a generation (only the current one is taken).
  /// - Returns: whether subscribers were sent it.
  @discardableResult
  public func send(_ path: NetworkPath) -> Bool { !broadcaster.offer(path).isEmpty }

  /// Plays an event stamped with the current generation.
  /// - Parameters:
  ///   - status: the status.
  ///   - expensive: whether the path is metered.
  ///   - constrained: whether the path is constrained.
  ///   - interfaces: the interfaces to report.
  /// - Returns: whether subscribers were sent it.
  @discardableResult
  package func send(
    _ status: PathStatus, expensive: Bool = false, constrained: Bool = false,
    interfaces: [NetworkInterface] = []
  ) -> Bool {
    send(
      NetworkPath(
        status: status, isExpensive: expensive, isConstrained: constrained,
        generation: generation, interfaces: interfaces))
  }

  /// Starts a new generation, as restarting a real monitor does: the path becomes `unknown` and
  /// events of older generations are ignored.
  /// - Returns: the new generation.
  @discardableResult
  package func restart() -> UInt64 { broadcaster.restart() }

  /// Waits until the calling task is cancelled, then returns; events come from `send(_:)`.
  /// - Throws: never; the signature is the port's.
  public func run() async throws {
    runs.withLock {
      $0.started += 1
      $0.active += 1
    }
    defer { runs.withLock { $0.active -= 1 } }
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    await withTaskCancellationHandler {
      for await _ in stream {}
    } onCancel: {
      continuation.finish()
    }
  }
}
