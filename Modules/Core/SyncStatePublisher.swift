import CourierDomain
import Synchronization

/// Holds the sync engine's current state and hands it to every subscriber: the current value
/// first, then every change; a slow subscriber only gets the newest.
///
/// The state's lock is held while a change is yielded, so changes arrive in order; the
/// streams sit behind a second lock that is never held while yielding. A stream's
/// `onTermination` runs under a cancelling task's own lock and takes only that second lock, so
/// a yield (which needs the resumed task's lock) and a cancellation never wait for each other.
package final class SyncStatePublisher: Sendable {
  private struct Subscribers {
    var continuations: [UInt64: AsyncStream<SyncState>.Continuation] = [:]
    var nextID: UInt64 = 0
  }

  private let box: Mutex<SyncState>
  private let subscribers = Mutex(Subscribers())

  /// Creates a publisher.
  /// - Parameter initial: the first state.
  package init(_ initial: SyncState = SyncState()) { box = Mutex(initial) }

  /// The current state.
  package var current: SyncState { box.withLock { $0 } }

  /// How many streams are open.
  package var subscriberCount: Int { subscribers.withLock { $0.continuations.count } }

  /// A new stream of states, the current one first (`bufferingNewest(1)`).
  /// - Returns: the stream; it ends when the publisher finishes or the consumer stops.
  package func updates() -> AsyncStream<SyncState> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: SyncState.self, bufferingPolicy: .bufferingNewest(1))
    let id = box.withLock { state -> UInt64 in
      let id = subscribers.withLock { subscribers -> UInt64 in
        subscribers.nextID += 1
        subscribers.continuations[subscribers.nextID] = continuation
        return subscribers.nextID
      }
      continuation.yield(state)
      return id
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
    }
    return stream
  }

  /// Changes the state and publishes it when it differs.
  /// - Parameter change: the change.
  package func update(_ change: (inout SyncState) -> Void) {
    box.withLock { state in
      var next = state
      change(&next)
      guard next != state else { return }
      state = next
      let all = subscribers.withLock { Array($0.continuations.values) }
      for continuation in all { continuation.yield(next) }
    }
  }

  /// Ends every stream.
  package func finish() {
    let all = subscribers.withLock { subscribers in
      defer { subscribers.continuations = [:] }
      return Array(subscribers.continuations.values)
    }
    for continuation in all { continuation.finish() }
  }
}
