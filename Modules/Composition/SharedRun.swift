import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One long-running operation (a path monitor's `run()`) shared by every caller of ``run()``:
/// the first caller starts it, the others join it, and it is cancelled when the last caller's
/// task is cancelled. A failure of the operation ends every caller's `run()` with the error.
///
/// A monitor must not be run twice at once (a second `run()` of the netlink monitor restarts
/// it and stops the first), yet a session's path stream and its article watch both need it
/// running: they share it through this.
final class SharedRun: Sendable {
  private struct State {
    var task: Task<Void, Never>?
    var generation: UInt64 = 0
    // An array, not a dictionary keyed by waiter: a handful of callers at most, and a
    // `[UInt64: …]` made every session's start-up pay a conformance scan.
    var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    var nextWaiter: UInt64 = 0
  }

  private let operation: @Sendable () async throws -> Void
  private let state = Mutex(State())

  /// - Parameter operation: what to run; it should return when its task is cancelled.
  init(_ operation: @escaping @Sendable () async throws -> Void) {
    self.operation = operation
  }

  /// Whether the operation is running (for tests).
  var isRunning: Bool { state.withLock { $0.task != nil } }

  /// Runs the operation, or joins the run under way, until the calling task is cancelled
  /// (then returns) or the operation ends (then returns, or throws its error).
  /// - Throws: the operation's error.
  func run() async throws {
    let waiter = state.withLock { state -> UInt64 in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let cancelled = state.withLock { state -> Bool in
          // The cancellation flag is set before the handler runs: checked under the lock, a
          // cancellation is either seen here or finds the waiter registered.
          if Task.isCancelled { return true }
          state.waiters.append((waiter, continuation))
          if state.task == nil {
            state.generation += 1
            let generation = state.generation
            let operation = operation
            state.task = Task { [weak self] in
              var failure: (any Error)?
              do { try await operation() } catch { failure = error }
              self?.finish(generation: generation, failure: failure)
            }
          }
          return false
        }
        if cancelled { continuation.resume() }
      }
    } onCancel: {
      leave(waiter)
    }
  }

  private func leave(_ waiter: UInt64) {
    let (continuation, task) = state.withLock {
      state -> (CheckedContinuation<Void, any Error>?, Task<Void, Never>?) in
      let continuation = state.waiters.firstIndex { $0.id == waiter }.map {
        state.waiters.remove(at: $0).continuation
      }
      guard continuation != nil, state.waiters.isEmpty else { return (continuation, nil) }
      defer { state.task = nil }
      return (continuation, state.task)
    }
    task?.cancel()
    continuation?.resume()
  }

  private func finish(generation: UInt64, failure: (any Error)?) {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
      // A run cancelled because everyone left, ending after a new one started: not ours.
      guard state.generation == generation, state.task != nil else { return [] }
      state.task = nil
      defer { state.waiters = [] }
      return state.waiters.map(\.continuation)
    }
    for waiter in waiters {
      if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
    }
  }
}
