import CourierSignals
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs long-lived commands (`watch`, `sync --watch`) so SIGINT and SIGTERM end them cleanly:
/// the signal cancels the work, which unwinds and releases its resources, then the command
/// returns its own exit code instead of the process dying mid-write.
enum Interruptible {
  /// Runs `body` until it finishes or SIGINT/SIGTERM arrives.
  /// - Parameter body: the work; it must stop promptly when cancelled.
  /// - Returns: the body's result, and whether a signal ended it.
  static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> (
    T?, interrupted: Bool
  ) {
    let task = Task { try await body() }
    let fired = Mutex(false)
    let signals = SignalWaiter([SIGINT, SIGTERM]) { _ in
      fired.withLock { $0 = true }
      task.cancel()
    }
    defer { signals.cancel() }
    do {
      let value = try await task.value
      return (value, fired.withLock { $0 })
    } catch {
      if fired.withLock({ $0 }) { return (nil, true) }
      throw error
    }
  }
}
