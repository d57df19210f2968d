import CourierDomain
import Synchronization

/// The plumbing every `PathMonitor` needs: a `NetworkHint` behind one lock, held while an
/// event's generation is checked and the event handed out, so that happens as one step (an
/// old monitor's event can never slip in between a restart and the new monitor's first event).
///
/// The subscribers' streams sit behind a second lock that is never held while yielding: a
/// stream's `onTermination` (run by a cancelling task under that task's own lock) takes only
/// that second lock, so a yield (which needs the resumed task's lock) and a cancellation can
/// never wait for each other.
package final class PathBroadcaster: Sendable {
  private struct State {
    var hint: NetworkHint
  }

  private struct Subscribers {
    var streams: [UInt64: AsyncStream<NetworkPath>.Continuation] = [:]
    var nextID: UInt64 = 0
  }

  private let state: Mutex<State>
  private let subscribers = Mutex(Subscribers())

  /// Creates a broadcaster that has heard nothing.
  /// - Parameter generation: the first accepted generation.
  package init(generation: UInt64 = 0) {
    state = Mutex(State(hint: NetworkHint(generation: generation)))
  }

  /// The latest path.
  package var current: NetworkPath { state.withLock { $0.hint.path } }

  /// The generation whose events are accepted.
  package var generation: UInt64 { state.withLock { $0.hint.generation } }

  /// How many streams are open.
  package var subscriberCount: Int { subscribers.withLock { $0.streams.count } }

  /// A new stream: the current path first, then every change; a slow consumer gets only the
  /// newest.
  /// - Returns: the stream.
  package func updates() -> AsyncStream<NetworkPath> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: NetworkPath.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state -> UInt64 in
      let id = subscribers.withLock { subscribers -> UInt64 in
        subscribers.nextID += 1
        subscribers.streams[subscribers.nextID] = continuation
        return subscribers.nextID
      }
      continuation.yield(state.hint.path)
      return id
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.subscribers.withLock { $0.streams.removeValue(forKey: id) }
    }
    return stream
  }

  /// Starts a new generation: older events are ignored from now on; subscribers see `unknown`
  /// if they saw something else.
  /// - Returns: the new generation.
  package func restart() -> UInt64 {
    state.withLock { state in
      let hadNews = state.hint.path.status != .unknown
      let generation = state.hint.restart()
      if hadNews { yield(state.hint.path) }
      return generation
    }
  }

  /// Moves to a new generation keeping the path, after the monitor took a fresh snapshot.
  /// - Parameter expected: the generation the caller runs under.
  /// - Returns: the new generation, or nil when a newer monitor has taken over.
  package func resynchronise(from expected: UInt64) -> UInt64? {
    state.withLock { $0.hint.resynchronise(from: expected) }
  }

  /// Offers a monitor's event: published only when it carries the current generation and
  /// differs from the current path.
  /// - Parameter path: the event.
  /// - Returns: the effects (empty when nothing was published).
  @discardableResult
  package func offer(_ path: NetworkPath) -> [PathHintEffect] {
    state.withLock { state in
      let effects = state.hint.accept(path)
      if !effects.isEmpty { yield(path) }
      return effects
    }
  }

  /// Relays an event from another monitor (for a decorator): a newer generation is adopted,
  /// an older one ignored, a repeat publishes nothing.
  /// - Parameter path: the event.
  /// - Returns: the effects (empty when nothing was published).
  @discardableResult
  package func relay(_ path: NetworkPath) -> [PathHintEffect] {
    state.withLock { state in
      let effects = state.hint.follow(path)
      if !effects.isEmpty { yield(path) }
      return effects
    }
  }

  /// Hands a path to every stream; called with `state` held (so events keep their order),
  /// never with `subscribers` held.
  private func yield(_ path: NetworkPath) {
    let streams = subscribers.withLock { Array($0.streams.values) }
    for continuation in streams { continuation.yield(path) }
  }
}
