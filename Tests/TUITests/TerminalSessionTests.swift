import Foundation
import Testing

@testable import CourierTUI

/// A pseudo-terminal pair: the session runs on `follower` as on a real TTY, the test reads what
/// it wrote on `leader`.
final class PseudoTerminal {
  let leader: Int32
  let follower: Int32

  init(rows: UInt16, columns: UInt16) throws {
    // posix_openpt/grantpt/unlockpt/ptsname are hidden from Swift's Glibc module (they need
    // _XOPEN_SOURCE): do what they do on Linux, with the ioctls' numbers from <asm/ioctls.h>.
    let getNumber: UInt = 0x8004_5430  // TIOCGPTN
    let setLock: UInt = 0x4004_5431  // TIOCSPTLCK
    let leader = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    var number: UInt32 = 0
    var unlock: Int32 = 0
    guard leader >= 0, ioctl(leader, setLock, &unlock) == 0, ioctl(leader, getNumber, &number) == 0
    else { throw TerminalError(message: "no pty", errno: errno) }
    let follower = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
    guard follower >= 0 else {
      close(leader)
      throw TerminalError(message: "no pty follower", errno: errno)
    }
    self.leader = leader
    self.follower = follower
    _ = fcntl(leader, F_SETFL, fcntl(leader, F_GETFL) | O_NONBLOCK)
    var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
    _ = ioctl(leader, UInt(TIOCSWINSZ), &size)
  }

  deinit {
    close(follower)
    close(leader)
  }

  /// What the session wrote so far.
  func drain() -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(leader, &buffer, buffer.count)
      guard count > 0 else { break }
      bytes += buffer.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  func localFlags() -> tcflag_t {
    var settings = termios()
    _ = tcgetattr(follower, &settings)
    return settings.c_lflag
  }
}

// Serialized: a session installs process-wide signal handlers.
@Suite("TerminalSession", .serialized)
struct TerminalSessionTests {
  @Test("raw mode and the alternate screen while it runs, everything back after restore")
  func rawModeAndRestore() throws {
    let pty = try PseudoTerminal(rows: 33, columns: 101)
    let before = pty.localFlags()
    #expect(before & tcflag_t(ICANON) != 0)
    let session = try TerminalSession(input: pty.follower, output: pty.follower)
    let raw = pty.localFlags()
    #expect(raw & tcflag_t(ICANON) == 0)
    #expect(raw & tcflag_t(ECHO) == 0)
    #expect(raw & tcflag_t(ISIG) == 0)
    #expect(session.size() == TerminalSize(rows: 33, columns: 101))
    let entered = pty.drain()
    #expect(entered.contains("\u{1B}[?1049h"))
    #expect(entered.contains("\u{1B}[?25l"))

    session.restore()
    #expect(pty.localFlags() == before)
    let left = pty.drain()
    #expect(left.contains("\u{1B}[?1049l"))
    #expect(left.contains("\u{1B}[?25h"))
    session.restore()
    #expect(pty.drain().isEmpty)
  }

  @Test("SIGWINCH and a first terminating signal (SIGHUP) arrive as bytes on the signal pipe")
  func signalsForwarded() throws {
    let pty = try PseudoTerminal(rows: 24, columns: 80)
    let session = try TerminalSession(input: pty.follower, output: pty.follower)
    defer { session.restore() }
    // To the process, not with raise(): this thread may block signals (the test runner's
    // threads do), and the handler runs on whichever thread does not. SIGHUP rather than
    // SIGTERM: the process's one signal pipe also serves in-process `courier` commands other
    // suites run meanwhile, and a SIGTERM would interrupt them.
    var received: [UInt8] = []
    for number in [SIGWINCH, SIGHUP] {
      kill(getpid(), number)
      var descriptor = pollfd(fd: session.signalFD, events: Int16(POLLIN), revents: 0)
      #expect(poll(&descriptor, 1, 10_000) == 1)
      var byte: UInt8 = 0
      if read(session.signalFD, &byte, 1) == 1 { received.append(byte) }
    }
    #expect(received == [UInt8(SIGWINCH), UInt8(SIGHUP)])
  }

  @Test("the guard restores the terminal when it goes away")
  func deinitRestores() throws {
    let pty = try PseudoTerminal(rows: 24, columns: 80)
    let before = pty.localFlags()
    do {
      _ = try TerminalSession(input: pty.follower, output: pty.follower)
    }
    #expect(pty.localFlags() == before)
    #expect(pty.drain().contains("\u{1B}[?1049l"))
  }

  @Test("without a TTY it refuses with a clear message")
  func notATerminal() throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    defer { fds.forEach { close($0) } }
    let error = #expect(throws: TerminalError.self) {
      _ = try TerminalSession(input: fds[0], output: fds[1])
    }
    #expect(error?.message.contains("needs an interactive terminal") == true)
    #expect(!TerminalSession.isTerminal(input: fds[0], output: fds[1]))
  }

  @Test(
    "colour only on a terminal, never with NO_COLOR or TERM=dumb",
    arguments: [
      (true, [String: String](), true),
      (false, [:], false),
      (true, ["NO_COLOR": "1"], false),
      (true, ["NO_COLOR": ""], false),
      (true, ["TERM": "dumb"], false),
      (true, ["TERM": "xterm-256color"], true),
    ])
  func colour(isTerminal: Bool, environment: [String: String], expected: Bool) {
    #expect(ColourPolicy.isEnabled(isTerminal: isTerminal, environment: environment) == expected)
  }
}
