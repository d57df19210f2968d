import Synchronization

/// Wakes the replayer's run loops: `ring()` counts a ring and resumes every waiter; `wait(since:)`
/// returns once the count moved past what the waiter saw, or when its task is cancelled. The count
/// makes a ring between a check and the wait impossible to miss.
final class Doorbell: Sendable {
  private struct State {
    var rings: UInt64 = 0
    var nextID: UInt64 = 0
    var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
  }

  private let state = Mutex(State())

  /// How many rings so far.
  var rings: UInt64 { state.withLock { $0.rings } }

  /// Rings: every waiter resumes.
  func ring() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.rings &+= 1
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Waits for a ring after `seen` (the count read before deciding to wait), or cancellation.
  func wait(since seen: UInt64) async {
    let id = state.withLock { state -> UInt64 in
      state.nextID &+= 1
      return state.nextID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumeNow = state.withLock { state -> Bool in
          if state.rings != seen || Task.isCancelled { return true }
          state.waiters[id] = continuation
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }
}
