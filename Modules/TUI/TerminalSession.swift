import CourierSignals
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The terminal's descriptor to restore in an emergency, or -1.
private let emergencyFD = Atomic<Int32>(-1)

/// The address of the saved `termios`, or 0.
private let emergencyTermios = Atomic<UInt>(0)

/// The address of the previous `sigaction`s, indexed by signal number, or 0.
private let previousActions = Atomic<UInt>(0)

private let leaveSequence: StaticString = "\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"

private let enterSequence = "\u{1B}[?1049h\u{1B}[?7l\u{1B}[?25l\u{1B}[H\u{1B}[2J"

private let forwardedSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]

private let fatalSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT]

private let signalTableSize = 65

/// Puts the terminal back as it was, from a signal handler: only async-signal-safe calls.
private func emergencyRestore() {
  let fd = emergencyFD.load(ordering: .acquiring)
  let address = emergencyTermios.load(ordering: .acquiring)
  guard fd >= 0, let saved = UnsafePointer<termios>(bitPattern: address) else { return }
  _ = leaveSequence.withUTF8Buffer { write(fd, $0.baseAddress, $0.count) }
  _ = tcsetattr(fd, TCSANOW, saved)
}

/// One byte (a signal's number) into a pipe.
private func writeByte(_ fd: Int32, _ number: Int32) {
  var byte = UInt8(truncatingIfNeeded: number)
  _ = write(fd, &byte, 1)
}

/// A crash: restore the terminal, put back the previous handler (the Swift runtime's backtracer
/// or the default) and return, so the faulting instruction runs again under it.
private func fatalHandler(_ number: Int32) {
  emergencyRestore()
  let table = previousActions.load(ordering: .acquiring)
  if let actions = UnsafeMutablePointer<sigaction>(bitPattern: table), number < signalTableSize {
    _ = sigaction(number, actions + Int(number), nil)
  } else {
    _ = signal(number, SIG_DFL)
  }
  if number == SIGABRT { _ = raise(number) }
}

/// A `sigaction` running `handler`, with no flags and nothing blocked.
private func makeAction(_ handler: @convention(c) (Int32) -> Void) -> sigaction {
  var action = sigaction()
  #if os(Linux)
    action.__sigaction_handler.sa_handler = handler
  #else
    action.__sigaction_u.__sa_handler = handler
  #endif
  sigemptyset(&action.sa_mask)
  action.sa_flags = 0
  return action
}

/// Writes all of `text` to `fd`, retrying short writes and interruptions; gives up quietly when
/// the terminal is gone (there is nothing left to show anything on).
private func writeAll(_ fd: Int32, _ text: String) {
  var text = text
  text.withUTF8 { buffer in
    guard let base = buffer.baseAddress else { return }
    var offset = 0
    while offset < buffer.count {
      let written = write(fd, base + offset, buffer.count - offset)
      if written > 0 {
        offset += written
      } else if written < 0, errno == EINTR || errno == EAGAIN {
        continue
      } else {
        return
      }
    }
  }
}

/// The terminal in full-screen raw mode, and the guard that puts it back.
///
/// `start()` saves the terminal's settings, switches to raw mode and the alternate screen,
/// hides the cursor and installs signal handlers; `restore()` (idempotent, also run by
/// `deinit`) undoes all of it. SIGINT, SIGTERM, SIGHUP and SIGWINCH are forwarded through a
/// self-pipe to the event loop; a second SIGINT/SIGTERM, or a crash signal, restores the
/// terminal from the handler itself.
package final class TerminalSession: Sendable {
  private let fd: Int32
  private let inputFD: Int32
  private let pipeReadFD: Int32
  private let pipeWriteFD: Int32
  // Addresses rather than pointers, to stay Sendable: memory this object allocates in `init`
  // and frees in `deinit`, written before the handlers are installed, read-only afterwards.
  private let savedAddress: UInt
  private let savedActionsAddress: UInt
  private let isActive = Atomic<Bool>(true)
  /// The pipe's write end while the session is active (-1 after), and the subscription to the
  /// process's `SignalPipe` that relays signals into it.
  private let relay = Mutex<(fd: Int32, token: Int?)>((-1, nil))

  private var saved: UnsafeMutablePointer<termios>? {
    UnsafeMutablePointer(bitPattern: savedAddress)
  }
  private var savedActions: UnsafeMutablePointer<sigaction>? {
    UnsafeMutablePointer(bitPattern: savedActionsAddress)
  }

  /// Whether both descriptors are terminals.
  /// - Parameters:
  ///   - input: the input descriptor.
  ///   - output: the output descriptor.
  /// - Returns: true when both are TTYs.
  package static func isTerminal(input: Int32 = 0, output: Int32 = 1) -> Bool {
    isatty(input) == 1 && isatty(output) == 1
  }

  /// Takes over the terminal.
  /// - Parameters:
  ///   - input: the keyboard's descriptor.
  ///   - output: the screen's descriptor.
  /// - Throws: `TerminalError.notATerminal` without a TTY, or when a call fails (nothing is
  ///   changed then).
  package init(input: Int32 = 0, output: Int32 = 1) throws {
    guard Self.isTerminal(input: input, output: output) else { throw TerminalError.notATerminal }
    self.fd = output
    self.inputFD = input
    let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    saved.initialize(to: termios())
    let savedActions = UnsafeMutablePointer<sigaction>.allocate(capacity: signalTableSize)
    savedActions.initialize(repeating: sigaction(), count: signalTableSize)
    savedAddress = UInt(bitPattern: saved)
    savedActionsAddress = UInt(bitPattern: savedActions)
    guard tcgetattr(input, saved) == 0 else {
      let code = errno
      saved.deallocate()
      savedActions.deallocate()
      throw TerminalError(message: "Couldn't read the terminal's settings.", errno: code)
    }
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
      let code = errno
      saved.deallocate()
      savedActions.deallocate()
      throw TerminalError(message: "Couldn't create the signal pipe.", errno: code)
    }
    for descriptor in fds {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }
    pipeReadFD = fds[0]
    pipeWriteFD = fds[1]

    // cfmakeraw: no echo, no line editing, no signals from keys (Ctrl-C arrives as a byte),
    // no CR/LF translation; a read returns as soon as one byte is there.
    var raw = saved.pointee
    cfmakeraw(&raw)
    guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else {
      let code = errno
      close(pipeReadFD)
      close(pipeWriteFD)
      saved.deallocate()
      savedActions.deallocate()
      throw TerminalError(message: "Couldn't switch the terminal to raw mode.", errno: code)
    }
    // The handlers read these: set them before installing the handlers.
    emergencyFD.store(input, ordering: .releasing)
    emergencyTermios.store(UInt(bitPattern: saved), ordering: .releasing)
    previousActions.store(UInt(bitPattern: savedActions), ordering: .releasing)
    relay.withLock { $0.fd = fds[1] }
    installHandlers()
    writeAll(fd, enterSequence)
  }

  deinit {
    restore()
    saved?.deallocate()
    savedActions?.deallocate()
  }

  /// The read end of the self-pipe: one byte per signal received (its number).
  package var signalFD: Int32 { pipeReadFD }

  /// The I/O for the event loop.
  package var io: TerminalIO {
    TerminalIO(
      inputFD: inputFD, signalFD: pipeReadFD, write: { [self] in self.write($0) },
      size: { [self] in self.size() })
  }

  /// The window size, from `TIOCGWINSZ` (80×24 when the call fails).
  /// - Returns: the size.
  package func size() -> TerminalSize {
    Self.size(of: fd)
  }

  /// The window size of a descriptor, from `TIOCGWINSZ`.
  /// - Parameter fd: the descriptor.
  /// - Returns: the size, or 80×24 when the call fails.
  package static func size(of fd: Int32) -> TerminalSize {
    var size = winsize()
    guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else {
      return .minimum
    }
    return TerminalSize(rows: Int(size.ws_row), columns: Int(size.ws_col))
  }

  /// Writes text to the terminal, whole (retrying short writes and interruptions).
  /// - Parameter text: the text.
  package func write(_ text: String) {
    writeAll(fd, text)
  }

  /// Gives the terminal back: the normal screen, the cursor, the saved settings, the previous
  /// signal handlers. Safe to call more than once.
  package func restore() {
    guard isActive.exchange(false, ordering: .acquiringAndReleasing) else { return }
    uninstallHandlers()
    // No relay from here: a late signal cannot write to a closed pipe.
    let token = relay.withLock { relay -> Int? in
      relay.fd = -1
      return relay.token
    }
    if let token { SignalPipe.shared.unsubscribe(token) }
    emergencyFD.store(-1, ordering: .releasing)
    emergencyTermios.store(0, ordering: .releasing)
    leaveSequence.withUTF8Buffer { writeAll(fd, String(decoding: $0, as: UTF8.self)) }
    if let saved { _ = tcsetattr(inputFD, TCSAFLUSH, saved) }
    close(pipeWriteFD)
    close(pipeReadFD)
  }

  private func installHandlers() {
    guard let savedActions else { return }
    // SIGINT, SIGTERM, SIGHUP, SIGWINCH through the process's signal pipe, relayed into this
    // session's pipe for the event loop; a second SIGINT/SIGTERM restores and dies on the spot.
    let token = SignalPipe.shared.subscribe { [weak self] number in
      self?.relay.withLock { relay in
        guard relay.fd >= 0 else { return }
        writeByte(relay.fd, number)
      }
    }
    relay.withLock { $0.token = token }
    SignalPipe.shared.setEmergencyAction { emergencyRestore() }
    for number in forwardedSignals {
      savedActions[Int(number)] = SignalPipe.shared.catchSignal(number)
    }
    for number in fatalSignals {
      var action = makeAction { fatalHandler($0) }
      _ = sigaction(number, &action, savedActions + Int(number))
    }
  }

  private func uninstallHandlers() {
    guard let savedActions else { return }
    SignalPipe.shared.setEmergencyAction(nil)
    for number in forwardedSignals + fatalSignals {
      _ = sigaction(number, savedActions + Int(number), nil)
    }
    previousActions.store(0, ordering: .releasing)
  }
}
