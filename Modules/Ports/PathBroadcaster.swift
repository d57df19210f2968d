import CourierDomain
import Synchronization

/// The plumbing every `PathMonitor` needs: a `NetworkHint` and the subscribers' streams behind
/// one lock, so checking an event's generation and handing it out happen as one step (an old
/// monitor's event can never slip in between a restart and the new monitor's first event).
public final class PathBroadcaster: Sendable {
  private struct State {
    var hint: NetworkHint
    var subscribers: [UInt64: AsyncStream<NetworkPath>.Continuation] = [:]
    var nextID: UInt64 = 0
  }

  private let state: Mutex<State>

  /// Creates a broadcaster that has heard nothing.
  /// - Parameter generation: the first accepted generation.
  public init(generation: UInt64 = 0) {
    state = Mutex(State(hint: NetworkHint(generation: generation)))
  }

  /// The latest path.
  public var current: NetworkPath { state.withLock { $0.hint.path } }

  /// The generation whose events are accepted.
  public var generation: UInt64 { state.withLock { $0.hint.generation } }

  /// How many streams are open.
  public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

  /// A new stream: the current path first, then every change; a slow consumer gets only the
  /// newest.
  /// - Returns: the stream.
  public func updates() -> AsyncStream<NetworkPath> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: NetworkPath.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state -> UInt64 in
      state.nextID += 1
      state.subscribers[state.nextID] = continuation
      continuation.yield(state.hint.path)
      return state.nextID
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Starts a new generation: older events are ignored from now on; subscribers see `unknown`
  /// if they saw something else.
  /// - Returns: the new generation.
  public func restart() -> UInt64 {
    state.withLock { state in
      let hadNews = state.hint.path.status != .unknown
      let generation = state.hint.restart()
      if hadNews { Self.yield(state.hint.path, to: state.subscribers) }
      return generation
    }
  }

  /// Moves to a new generation keeping the path, after the monitor took a fresh snapshot.
  /// - Parameter expected: the generation the caller runs under.
  /// - Returns: the new generation, or nil when a newer monitor has taken over.
  public func resynchronise(from expected: UInt64) -> UInt64? {
    state.withLock { $0.hint.resynchronise(from: expected) }
  }

  /// Offers a monitor's event: published only when it carries the current generation and
  /// differs from the current path.
  /// - Parameter path: the event.
  /// - Returns: the effects (empty when nothing was published).
  @discardableResult
  public func offer(_ path: NetworkPath) -> [PathHintEffect] {
    state.withLock { state in
      let effects = state.hint.accept(path)
      if !effects.isEmpty { Self.yield(path, to: state.subscribers) }
      return effects
    }
  }

  /// Relays an event from another monitor (for a decorator): a newer generation is adopted,
  /// an older one ignored, a repeat publishes nothing.
  /// - Parameter path: the event.
  /// - Returns: the effects (empty when nothing was published).
  @discardableResult
  public func relay(_ path: NetworkPath) -> [PathHintEffect] {
    state.withLock { state in
      let effects = state.hint.follow(path)
      if !effects.isEmpty { Self.yield(path, to: state.subscribers) }
      return effects
    }
  }

  private static func yield(
    _ path: NetworkPath, to subscribers: [UInt64: AsyncStream<NetworkPath>.Continuation]
  ) {
    for continuation in subscribers.values { continuation.yield(path) }
  }
}
