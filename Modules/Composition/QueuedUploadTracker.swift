import CourierCore
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The live progress of the queued uploads this process sends, by upload id, and who wants to
/// hear of each change (`QueuedUploads.updates()`).
final class QueuedUploadTracker: Sendable {
  private struct State {
    var sending: [String: Int64] = [:]
    /// The first bytes each running transfer reported: where it started (the server's
    /// offset, after a tus `HEAD`).
    var started: [String: Int64] = [:]
    var listeners: [UUID: AsyncStream<Void>.Continuation] = [:]
  }
  private let state = Mutex(State())
  // At most ten changes a second reach the listeners (a 4 MiB chunk reports ~100 times).
  private let throttle = ProgressThrottle(interval: .milliseconds(100))

  /// The bytes being sent now, by upload id.
  var sending: [String: Int64] { state.withLock { $0.sending } }
  /// Where each running transfer started, by upload id, once it reported.
  var started: [String: Int64] { state.withLock { $0.started } }

  func began(_ id: String, at offset: Int64?) {
    state.withLock {
      $0.sending[id] = offset ?? 0
      $0.started[id] = nil
    }
    throttle.reset()
    notify()
  }

  func progressed(_ id: String, _ progress: TransferProgress) {
    let first = state.withLock { state -> Bool in
      state.sending[id] = progress.sent
      guard state.started[id] == nil else { return false }
      state.started[id] = progress.sent
      return true
    }
    if throttle.admit(sent: progress.sent, total: progress.total) || first { notify() }
  }

  func ended(_ id: String) {
    state.withLock {
      $0.sending[id] = nil
      $0.started[id] = nil
    }
    notify()
  }

  /// A stream that yields once at once and after every change; the newest only.
  func changes() -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let key = UUID()
    state.withLock { $0.listeners[key] = continuation }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.listeners.removeValue(forKey: key) }
    }
    continuation.yield()
    return stream
  }

  func notify() {
    for listener in state.withLock({ Array($0.listeners.values) }) { listener.yield() }
  }
}

/// A `ReplaySender` decorator that tells the tracker when a queued upload's transfer begins,
/// moves and ends, and passes the progress on; before each send it removes the files of
/// uploads that left the outbox (the last one's proof, once its entry was completed). `changed`
/// hears when a transfer begins and ends (the queued uploads' gauges, decision 2203).
struct TrackedReplaySender: ReplaySender {
  let base: any ReplaySender
  let tracker: QueuedUploadTracker
  let tidy: @Sendable () -> Void
  let confirmed: @Sendable (String) -> Int64?
  var changed: @Sendable () -> Void = {}

  func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer
  {
    tidy()
    let id = entry.key.id
    let tracker = tracker
    tracker.began(id, at: confirmed(id))
    changed()
    defer {
      tracker.ended(id)
      changed()
    }
    return await base.send(entry) { value in
      tracker.progressed(id, value)
      progress?(value)
    }
  }
}
