import CourierSignals
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The file descriptors and calls the event loop needs from a terminal, so that tests can run
/// the loop on pipes.
package struct TerminalIO: Sendable {
  /// Where key bytes come from (non-blocking is not required: it is polled).
  package var inputFD: Int32
  /// Where signal numbers arrive, one byte each (the session's self-pipe), or -1.
  package var signalFD: Int32
  /// Writes bytes to the terminal.
  package var write: @Sendable (String) -> Void
  /// The terminal's current size.
  package var size: @Sendable () -> TerminalSize

  /// Creates the I/O.
  /// - Parameters:
  ///   - inputFD: the input descriptor.
  ///   - signalFD: the signal pipe's read end, or -1.
  ///   - write: writes to the terminal.
  ///   - size: reads the size.
  package init(
    inputFD: Int32, signalFD: Int32 = -1, write: @escaping @Sendable (String) -> Void,
    size: @escaping @Sendable () -> TerminalSize
  ) {
    self.inputFD = inputFD
    self.signalFD = signalFD
    self.write = write
    self.size = size
  }
}

// MARK: - What the signal handlers may touch

// A signal handler may only make async-signal-safe calls: no allocation, no lock. Everything it
// reads is therefore a lock-free atomic set up before the handler is installed, pointing at
// memory allocated once and never freed.
