import CourierDomain
import Synchronization

/// Holds the sync engine's current state and hands it to every subscriber: the current value
/// first, then every change; a slow subscriber only gets the newest.
public final class SyncStatePublisher: Sendable {
  private struct Subscribers {
    var state: SyncState
    var continuations: [UInt64: AsyncStream<SyncState>.Continuation] = [:]
    var nextID: UInt64 = 0
  }

  private let box: Mutex<Subscribers>

  /// Creates a publisher.
  /// - Parameter initial: the first state.
  public init(_ initial: SyncState = SyncState()) { box = Mutex(Subscribers(state: initial)) }

  /// The current state.
  public var current: SyncState { box.withLock { $0.state } }

  /// How many streams are open.
  public var subscriberCount: Int { box.withLock { $0.continuations.count } }

  /// A new stream of states, the current one first (`bufferingNewest(1)`).
  /// - Returns: the stream; it ends when the publisher finishes or the consumer stops.
  public func updates() -> AsyncStream<SyncState> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: SyncState.self, bufferingPolicy: .bufferingNewest(1))
    let id = box.withLock { box -> UInt64 in
      box.nextID += 1
      box.continuations[box.nextID] = continuation
      continuation.yield(box.state)
      return box.nextID
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.box.withLock { $0.continuations.removeValue(forKey: id) }
    }
    return stream
  }

  /// Changes the state and publishes it when it differs.
  /// - Parameter change: the change.
  public func update(_ change: (inout SyncState) -> Void) {
    box.withLock { box in
      var next = box.state
      change(&next)
      guard next != box.state else { return }
      box.state = next
      for continuation in box.continuations.values { continuation.yield(next) }
    }
  }

  /// Ends every stream.
  public func finish() {
    let all = box.withLock { box in
      defer { box.continuations = [:] }
      return Array(box.continuations.values)
    }
    for continuation in all { continuation.finish() }
  }
}
