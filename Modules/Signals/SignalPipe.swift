import CourierSystem
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

// What the handler may touch. A signal handler may only make async-signal-safe calls: no
// allocation, no lock. Everything it reads is a lock-free atomic set before it is installed.

/// The write end of the self-pipe, read by the handler: a plain atomic, nothing lazy.
private let signalWriteFD = Atomic<Int32>(-1)
/// The address of the emergency action (a `@convention(c)` function), or 0.
private let emergencyAction = Atomic<UInt>(0)
/// Terminating signals received since the emergency action was set.
private let terminatingCount = Atomic<Int>(0)

/// Async-signal-safe: one byte into the pipe, errno preserved. With an emergency action set, a
/// second terminating signal means the program did not get to the first: the action runs (a
/// terminal restores itself) and the process dies of the signal on the spot.
private func pipeHandler(_ number: Int32) {
  let savedErrno = errno
  defer { errno = savedErrno }
  if number != SIGWINCH,
    let action = UnsafeRawPointer(
      bitPattern: emergencyAction.load(ordering: .acquiring))
  {
    let (previous, _) = terminatingCount.wrappingAdd(1, ordering: .relaxed)
    if previous >= 1 {
      unsafeBitCast(action, to: (@convention(c) () -> Void).self)()
      _ = signal(number, SIG_DFL)
      _ = raise(number)  // blocked until the handler returns, then the default action
      return
    }
  }
  let fd = signalWriteFD.load(ordering: .acquiring)
  guard fd >= 0 else { return }
  var byte = UInt8(truncatingIfNeeded: number)
  _ = write(fd, &byte, 1)
}

/// The process's one signal helper: a real handler (`sigaction`) writes each caught signal's
/// number into a self-pipe, and a thread of its own reads the pipe and hands the number to every
/// subscriber. `courier`'s long commands (`SignalWaiter`) and `courier-tui`'s terminal
/// (`TerminalSession`) both catch their signals through it.
///
/// A dispatch signal source is not used: on Linux it reads a `signalfd`, which sees a signal
/// only if every thread blocks it, and with the disposition set to "ignore" meanwhile a SIGTERM
/// delivered to any other thread was silently dropped.
package final class SignalPipe: Sendable {
  /// The process's pipe and its reader thread, started on first use.
  package static let shared = SignalPipe()

  private let subscribers = Mutex<(next: Int, all: [Int: @Sendable (Int32) -> Void])>((0, [:]))

  private init() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    signalWriteFD.store(fds[1], ordering: .releasing)
    let readFD = fds[0]
    DetachedThread.start(name: "courier.signals") { [self] in
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
  }

  /// Hands each caught signal to `handler`, on the reader thread, until `unsubscribe`.
  /// - Parameter handler: receives the signal's number.
  /// - Returns: the token for `unsubscribe`.
  package func subscribe(_ handler: @escaping @Sendable (Int32) -> Void) -> Int {
    subscribers.withLock { state in
      state.next += 1
      state.all[state.next] = handler
      return state.next
    }
  }

  /// Stops handing signals to a subscriber.
  /// - Parameter token: what `subscribe` returned.
  package func unsubscribe(_ token: Int) {
    _ = subscribers.withLock { $0.all.removeValue(forKey: token) }
  }

  /// Catches `number` from now on (interrupted reads and writes restart: the pipe, not EINTR,
  /// carries the news).
  /// - Parameter number: the signal.
  /// - Returns: the action it replaced, for `restore(_:to:)`.
  @discardableResult
  package func catchSignal(_ number: Int32) -> sigaction {
    var action = sigaction()
    #if os(Linux)
      action.__sigaction_handler.sa_handler = pipeHandler
    #else
      action.__sigaction_u.__sa_handler = pipeHandler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = Int32(SA_RESTART)
    var previous = sigaction()
    _ = sigaction(number, &action, &previous)
    return previous
  }

  /// Puts an action back.
  /// - Parameters:
  ///   - number: the signal.
  ///   - action: the action `catchSignal` returned.
  package func restore(_ number: Int32, to action: sigaction) {
    var action = action
    _ = sigaction(number, &action, nil)
  }

  /// Sets (or clears, with nil) what a second terminating signal runs in the handler itself
  /// before the process dies of it: only async-signal-safe calls. The count starts again.
  /// - Parameter action: the action.
  package func setEmergencyAction(_ action: (@convention(c) () -> Void)?) {
    terminatingCount.store(0, ordering: .relaxed)
    let address = action.map { UInt(bitPattern: unsafeBitCast($0, to: UnsafeRawPointer.self)) }
    emergencyAction.store(address ?? 0, ordering: .releasing)
  }

  /// Unblocks SIGINT, SIGTERM and SIGHUP in the calling thread. A parent may start a program
  /// with them blocked (a child spawned from a thread of Swift's concurrency pool or of
  /// libdispatch inherits that thread's mask): `kill` would then never reach the handlers. Call
  /// it first thing in `main`, before any thread starts, so that every thread inherits it.
  package static func unblockTerminationSignals() {
    var signals = sigset_t()
    sigemptyset(&signals)
    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, number) }
    sigprocmask(SIG_UNBLOCK, &signals, nil)
  }

  private func deliver(_ number: Int32) {
    let handlers = subscribers.withLock { Array($0.all.values) }
    for handler in handlers { handler(number) }
  }
}
