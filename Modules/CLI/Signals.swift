import Dispatch
import Foundation
import Synchronization

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
    let queue = DispatchQueue(label: "courier.signals")
    let fired = SignalFlag()
    let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler {
        fired.set()
        task.cancel()
      }
      source.resume()
      return source
    }
    defer {
      sources.forEach { $0.cancel() }
      signal(SIGINT, SIG_DFL)
      signal(SIGTERM, SIG_DFL)
    }
    do {
      let value = try await task.value
      return (value, fired.isSet)
    } catch {
      if fired.isSet { return (nil, true) }
      throw error
    }
  }
}

/// A flag set from a signal handler's queue and read from the command.
private final class SignalFlag: Sendable {
  private let flag = Mutex(false)
  func set() { flag.withLock { $0 = true } }
  var isSet: Bool { flag.withLock { $0 } }
}
