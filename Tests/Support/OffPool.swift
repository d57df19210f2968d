import Foundation

/// Runs blocking work (waiting for a child process, reading its pipes) on a thread of its own,
/// so that it never holds a thread of Swift's concurrency pool. The pool has one thread per
/// core: on a 2-core machine, two tests blocked in `waitUntilExit` starve every other test of
/// the run, and tests that only wait on a manual clock run past their time limits.
/// - Parameter work: the blocking work.
/// - Returns: what it returned.
/// - Throws: what it threw.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    let thread = Thread { continuation.resume(with: Result { try work() }) }
    thread.start()
  }
}

extension Process {
  /// Waits for the process to exit without holding a thread of the concurrency pool (as
  /// `waitUntilExit` does, spinning a run loop), checking every 20 ms up to `limit`.
  /// - Parameter limit: the longest wait.
  /// - Returns: whether it exited within the limit.
  @discardableResult
  public func exited(within limit: Duration = .seconds(60)) async -> Bool {
    let end = ContinuousClock.now + limit
    while isRunning {
      guard ContinuousClock.now < end else { return false }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return true
  }
}
