import Synchronization

/// A clock that moves only when a test advances it, so backoff is tested without sleeping. Its
/// instants are `ContinuousClock`'s, starting where that clock stood when this one was made.
public final class ManualClock: Clock, Sendable {

  private struct Sleeper {
    let id: UInt64
    let deadline: ContinuousClock.Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = ContinuousClock.now
    var nextID: UInt64 = 0
    var sleepers: [Sleeper] = []
    var sleepLog: [Duration] = []
    var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = Mutex(State())

  /// Creates a clock at the continuous clock's present instant, standing still.
  public init() {}

  /// The current instant.
  public var now: ContinuousClock.Instant { state.withLock { $0.now } }

  /// The smallest meaningful step.
  public var minimumResolution: Duration { .zero }

  /// Every duration a caller asked to sleep, in order.
  public var sleepLog: [Duration] { state.withLock { $0.sleepLog } }

  /// How many callers are sleeping now.
  package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// Suspends until the clock is advanced past `deadline`, or the task is cancelled.
  /// - Parameters:
  ///   - deadline: when to wake.
  ///   - tolerance: ignored.
  /// - Throws: `CancellationError` when the task is cancelled while sleeping.
  public func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration? = nil)
    async throws
  {
    try Task.checkCancellation()
    let id = state.withLock { state -> UInt64 in
      state.nextID += 1
      state.sleepLog.append(state.now.duration(to: deadline))
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let (resumeNow, waiters) = state.withLock {
          state -> (Bool, [CheckedContinuation<Void, Never>]) in
          if deadline <= state.now { return (true, []) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return (false, Self.takeSatisfiedWaiters(&state))
        }
        waiters.forEach { $0.resume() }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let sleeper = state.withLock { state -> Sleeper? in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return state.sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward and wakes every sleeper whose deadline has come.
  /// - Parameter duration: how far.
  public func advance(by duration: Duration) {
    let due = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.deadline <= now }
      state.sleepers.removeAll { $0.deadline <= now }
      return due
    }
    due.forEach { $0.continuation.resume() }
  }

  /// Suspends until at least `count` callers are sleeping on this clock: the synchronisation
  /// point a test uses instead of a real sleep.
  /// - Parameter count: how many sleepers to wait for.
  public func waitForSleepers(_ count: Int = 1) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> Bool in
        if state.sleepers.count >= count { return true }
        state.sleeperWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private static func takeSatisfiedWaiters(_ state: inout State) -> [CheckedContinuation<
    Void, Never
  >] {
    let count = state.sleepers.count
    let ready = state.sleeperWaiters.filter { $0.count <= count }.map(\.continuation)
    state.sleeperWaiters.removeAll { $0.count <= count }
    return ready
  }
}
