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

/// Catches some signals while it lives and hands them to the command, then puts the default
/// actions back (`cancel()`).
///
/// The signals are caught by a real handler (`sigaction`) that writes the signal's number into
/// a pipe, read by a thread of its own. A dispatch signal source is not used: on Linux it reads
/// a `signalfd`, which sees a signal only if every thread blocks it, and with the disposition
/// set to "ignore" meanwhile a SIGTERM delivered to any other thread was silently dropped.
package final class SignalWaiter: Sendable {
  private let numbers: [Int32]
  private let token: Int
  private let stream: AsyncStream<Int32>
  private let continuation: AsyncStream<Int32>.Continuation

  /// Starts catching `numbers`; each arrival is passed to `onSignal` (on the reader thread) and
  /// to `wait()`.
  package init(_ numbers: [Int32], onSignal: (@Sendable (Int32) -> Void)? = nil) {
    self.numbers = numbers
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    self.stream = stream
    self.continuation = continuation
    // The pipe carries every signal anyone catches (the terminal's SIGWINCH…): only these.
    token = SignalPipe.shared.subscribe { number in
      guard numbers.contains(number) else { return }
      onSignal?(number)
      continuation.yield(number)
    }
    for number in numbers { SignalPipe.shared.catchSignal(number) }
  }

  /// Returns when one of the signals arrives, or when the waiter is cancelled.
  package func wait() async {
    for await _ in stream { return }
  }

  /// Stops catching: the default actions are back.
  package func cancel() {
    for number in numbers { _ = signal(number, SIG_DFL) }
    SignalPipe.shared.unsubscribe(token)
    continuation.finish()
  }
}
