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

/// Catches some signals while it lives and hands them to the command, then puts the default
/// actions back (`cancel()`).
///
/// The signals are caught by a real handler (`sigaction`) that writes the signal's number into
/// a pipe, read by a thread of its own. A dispatch signal source is not used: on Linux it reads
/// a `signalfd`, which sees a signal only if every thread blocks it, and with the disposition
/// set to "ignore" meanwhile a SIGTERM delivered to any other thread was silently dropped.
final class SignalWaiter: Sendable {
  private let numbers: [Int32]
  private let token: Int
  private let stream: AsyncStream<Int32>
  private let continuation: AsyncStream<Int32>.Continuation

  /// Starts catching `numbers`; each arrival is passed to `onSignal` (on the reader thread) and
  /// to `wait()`.
  init(_ numbers: [Int32], onSignal: (@Sendable (Int32) -> Void)? = nil) {
    self.numbers = numbers
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    self.stream = stream
    self.continuation = continuation
    token = SignalPipe.shared.subscribe { number in
      onSignal?(number)
      continuation.yield(number)
    }
    for number in numbers { SignalPipe.shared.catchSignal(number) }
  }

  /// Returns when one of the signals arrives, or when the waiter is cancelled.
  func wait() async {
    for await _ in stream { return }
  }

  /// Stops catching: the default actions are back.
  func cancel() {
    for number in numbers { _ = signal(number, SIG_DFL) }
    SignalPipe.shared.unsubscribe(token)
    continuation.finish()
  }
}

/// The write end of the self-pipe, read by the handler: a plain atomic, nothing lazy.
private let signalWriteFD = Atomic<Int32>(-1)

/// Async-signal-safe: one byte into the pipe, errno preserved.
private func pipeHandler(_ number: Int32) {
  let savedErrno = errno
  defer { errno = savedErrno }
  let fd = signalWriteFD.load(ordering: .acquiring)
  guard fd >= 0 else { return }
  var byte = UInt8(truncatingIfNeeded: number)
  _ = write(fd, &byte, 1)
}

/// The process's one self-pipe and the thread that reads it.
private final class SignalPipe: Sendable {
  static let shared = SignalPipe()

  private let subscribers = Mutex<(next: Int, all: [Int: @Sendable (Int32) -> Void])>((0, [:]))

  private init() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    signalWriteFD.store(fds[1], ordering: .releasing)
    let readFD = fds[0]
    let thread = Thread { [self] in
      var byte: UInt8 = 0
      while true {
        let count = read(readFD, &byte, 1)
        if count == 1 {
          deliver(Int32(byte))
        } else if count < 0, errno == EINTR {
          continue
        } else {
          return
        }
      }
    }
    thread.name = "courier.signals"
    thread.start()
  }

  func subscribe(_ handler: @escaping @Sendable (Int32) -> Void) -> Int {
    subscribers.withLock { state in
      state.next += 1
      state.all[state.next] = handler
      return state.next
    }
  }

  func unsubscribe(_ token: Int) {
    _ = subscribers.withLock { $0.all.removeValue(forKey: token) }
  }

  func catchSignal(_ number: Int32) {
    var action = sigaction()
    #if os(Linux)
      action.__sigaction_handler.sa_handler = pipeHandler
    #else
      action.__sigaction_u.__sa_handler = pipeHandler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    _ = sigaction(number, &action, nil)
  }

  private func deliver(_ number: Int32) {
    let handlers = subscribers.withLock { Array($0.all.values) }
    for handler in handlers { handler(number) }
  }
}
