import CourierDomain
import Foundation
import Synchronization
import Testing

@testable import CourierTUI

/// Records the actions the loop runs; `syncNow` fails, to see the message.
actor RecordingActions: TUIActions {
  let calls: AsyncStream<String>.Continuation

  init(calls: AsyncStream<String>.Continuation) { self.calls = calls }

  func refresh() async throws { calls.yield("refresh") }
  func syncNow() async throws {
    calls.yield("sync")
    throw TUIActionError(message: "Nope, not now.")
  }
  func addArticle(title: String, body: String) async throws { calls.yield("add:\(title)|\(body)") }
  func editArticle(id: String, title: String, body: String) async throws {
    calls.yield("edit:\(id)")
  }
  func deleteArticle(id: String) async throws { calls.yield("delete:\(id)") }
  func upload(path: String) async throws {
    calls.yield("upload:\(path)")
    throw CourierError(.offline)
  }
}

/// A terminal made of pipes: the test types into `input`, sends signal numbers into `signals`,
/// and reads what the loop drew.
final class FakeTerminal: Sendable {
  let inputRead: Int32
  let inputWrite: Int32
  let signalRead: Int32
  let signalWrite: Int32
  private let inputOpen = Mutex(true)
  private let output = Mutex("")
  private let currentSize = Mutex(TerminalSize(rows: 24, columns: 80))
  let written: AsyncStream<Void>
  private let notify: AsyncStream<Void>.Continuation

  init() throws {
    var input: [Int32] = [-1, -1]
    var signals: [Int32] = [-1, -1]
    guard pipe(&input) == 0, pipe(&signals) == 0 else { throw TUIActionError(message: "pipe") }
    (inputRead, inputWrite, signalRead, signalWrite) = (input[0], input[1], signals[0], signals[1])
    (written, notify) = AsyncStream.makeStream(of: Void.self)
  }

  deinit {
    closeInput()
    for fd in [inputRead, signalRead, signalWrite] { close(fd) }
  }

  /// Closes the typing end, once (a second close could hit another test's descriptor).
  func closeInput() {
    if inputOpen.withLock({ open in
      defer { open = false }; return open
    }) {
      close(inputWrite)
    }
  }

  var io: TerminalIO {
    TerminalIO(
      inputFD: inputRead, signalFD: signalRead,
      write: { [self] text in
        output.withLock { $0 += text }
        notify.yield()
      },
      size: { [self] in currentSize.withLock { $0 } })
  }

  func type(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(inputWrite, $0.baseAddress, $0.count) }
  }

  func send(signal: Int32) {
    var byte = UInt8(signal)
    _ = write(signalWrite, &byte, 1)
  }

  func resize(to size: TerminalSize) { currentSize.withLock { $0 = size } }

  /// Takes what was drawn so far.
  func take() -> String {
    output.withLock { text in
      defer { text = "" }; return text
    }
  }
}

/// Waits, without sleeping, until the drawn output contains `text`.
func waitForOutput(
  _ text: String, on terminal: FakeTerminal, _ notes: inout AsyncStream<Void>.Iterator
) async -> Bool {
  var seen = ""
  while true {
    seen += terminal.take()
    if seen.contains(text) { return true }
    guard await notes.next() != nil else { return false }
  }
}

@Suite("TUIEventLoop", .timeLimit(.minutes(1)))
struct TUIEventLoopTests {
  @Test("keys run actions, core updates redraw without a key, q quits")
  func roundTrip() async throws {
    let terminal = try FakeTerminal()
    var notes = terminal.written.makeAsyncIterator()
    let (calls, callsContinuation) = AsyncStream.makeStream(of: String.self)
    var callIterator = calls.makeAsyncIterator()
    let (updates, updatesContinuation) = AsyncStream.makeStream(of: TUIUpdate.self)
    let loop = TUIEventLoop(
      io: terminal.io, actions: RecordingActions(calls: callsContinuation), updates: updates,
      colour: false)
    let run = Task { await loop.run() }

    #expect(await waitForOutput("Courier · Articles", on: terminal, &notes))
    updatesContinuation.yield(.path(.unsatisfied))
    #expect(await waitForOutput("Offline", on: terminal, &notes))
    updatesContinuation.yield(
      .articles([ArticleItem(id: "1", title: "Hello", body: "")], source: .network))
    #expect(await waitForOutput("Hello", on: terminal, &notes))

    terminal.type("r")
    #expect(await callIterator.next() == "refresh")
    // "Refreshing…" goes away once the refresh ends without an error: the status row is blank.
    let blankStatusRow = "\u{1B}[23;1H" + String(repeating: " ", count: 80)
    #expect(await waitForOutput(blankStatusRow, on: terminal, &notes))
    terminal.type("a")
    terminal.type("Été 🎉\r")
    terminal.type("corps\r")
    #expect(await callIterator.next() == "add:Été 🎉|corps")
    terminal.type("s")
    #expect(await callIterator.next() == "sync")
    #expect(
      await waitForOutput("Couldn't send the pending changes: Nope, not now.", on: terminal, &notes)
    )
    terminal.type("u/tmp/plage.jpg\r")
    #expect(await callIterator.next() == "upload:/tmp/plage.jpg")
    #expect(await waitForOutput("Couldn't upload the photo: You're offline.", on: terminal, &notes))
    terminal.type("dy")
    #expect(await callIterator.next() == "delete:1")

    terminal.type("q")
    #expect(await run.value == .quit)
  }

  @Test("a lone Escape is the Escape key once input goes quiet")
  func bareEscape() async throws {
    let terminal = try FakeTerminal()
    var notes = terminal.written.makeAsyncIterator()
    let (calls, callsContinuation) = AsyncStream.makeStream(of: String.self)
    _ = calls
    let loop = TUIEventLoop(
      io: terminal.io, actions: RecordingActions(calls: callsContinuation),
      updates: AsyncStream { _ in }, colour: false)
    let run = Task { await loop.run() }
    terminal.type("u")
    #expect(await waitForOutput("Path of the photo", on: terminal, &notes))
    terminal.type("\u{1B}")
    #expect(await waitForOutput("Upload cancelled.", on: terminal, &notes))
    terminal.type("\u{03}")
    #expect(await run.value == .quit)
  }

  @Test("SIGWINCH redraws at the new size; SIGTERM stops the loop")
  func signals() async throws {
    let terminal = try FakeTerminal()
    var notes = terminal.written.makeAsyncIterator()
    let (_, callsContinuation) = AsyncStream.makeStream(of: String.self)
    let loop = TUIEventLoop(
      io: terminal.io, actions: RecordingActions(calls: callsContinuation),
      updates: AsyncStream { _ in }, colour: false)
    let run = Task { await loop.run() }
    #expect(await waitForOutput("q quit", on: terminal, &notes))
    terminal.resize(to: TerminalSize(rows: 30, columns: 100))
    terminal.send(signal: SIGWINCH)
    #expect(await waitForOutput(String(repeating: "─", count: 100), on: terminal, &notes))
    terminal.send(signal: SIGTERM)
    #expect(await run.value == .signal(SIGTERM))
    #expect(TUIExit.signal(SIGTERM).status == 143)
  }

  @Test("the loop ends when the input closes")
  func inputClosed() async throws {
    let terminal = try FakeTerminal()
    let (_, callsContinuation) = AsyncStream.makeStream(of: String.self)
    let loop = TUIEventLoop(
      io: terminal.io, actions: RecordingActions(calls: callsContinuation),
      updates: AsyncStream { _ in }, colour: false)
    let run = Task { await loop.run() }
    terminal.closeInput()
    #expect(await run.value == .inputClosed)
  }

  @Test("error messages are for people: the shared table, the action's own, or a plain sentence")
  func messages() {
    #expect(
      TUIEventLoop.message(for: CourierError(.offline))
        == UserMessages.message(for: CourierError(.offline)))
    #expect(TUIEventLoop.message(for: TUIActionError(message: "Exact.")) == "Exact.")
    struct Opaque: Error {}
    #expect(TUIEventLoop.message(for: Opaque()) == "something went wrong.")
  }
}
