import CourierDomain
import CourierPorts
import CourierSystem

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

/// Runs the interface: one stream of events merging the keyboard, signals (SIGWINCH, SIGINT,
/// SIGTERM, SIGHUP) and the core's updates, each reduced into the state and followed by a
/// redraw of the rows that changed. No thread ever blocks in `read`: the keyboard is read by a
/// thread that `poll`s the input, the signal self-pipe and a wake-up pipe.
package final class TUIEventLoop: Sendable {
  /// How long a lone Escape waits for the rest of a sequence before it counts as the key.
  package static let escapeTimeoutMilliseconds: Int32 = 50

  private let io: TerminalIO
  private let actions: any TUIActions
  private let updates: AsyncStream<TUIUpdate>
  private let initialState: TUIState
  private let colour: Bool

  /// Creates a loop.
  /// - Parameters:
  ///   - io: the terminal's descriptors and calls.
  ///   - actions: what the keys ask the core to do.
  ///   - updates: the core's changes, applied as they come (the wiring merges its streams).
  ///   - initialState: the state to start from (say, the cached articles).
  ///   - colour: whether to use colour (see `ColourPolicy`).
  package init(
    io: TerminalIO, actions: any TUIActions, updates: AsyncStream<TUIUpdate>,
    initialState: TUIState = TUIState(), colour: Bool
  ) {
    self.io = io
    self.actions = actions
    self.updates = updates
    self.initialState = initialState
    self.colour = colour
  }

  /// Runs until the person quits, a terminating signal arrives or the input closes. Actions
  /// still running then are cancelled, not awaited, so the terminal is given back at once.
  /// - Returns: why it stopped.
  package func run() async -> TUIExit {
    let (events, continuation) = AsyncStream.makeStream(of: LoopEvent.self)
    guard let reader = InputReader(io: io, continuation: continuation) else {
      return .inputClosed
    }
    reader.start()
    let forwarder = Task { [updates] in
      for await update in updates { continuation.yield(.update(update)) }
    }
    var running: [Int: (action: TUIAction, task: Task<Void, Never>)] = [:]
    var nextTask = 0
    defer {
      reader.stop()
      forwarder.cancel()
      for entry in running.values { entry.task.cancel() }
      continuation.finish()
    }

    var state = initialState
    var decoder = InputDecoder()
    var writer = ScreenWriter()
    var size = io.size()
    draw(state, size: size, writer: &writer)

    for await event in events {
      var actionsToRun: [TUIAction] = []
      switch event {
      case .bytes(let bytes):
        for input in decoder.feed(bytes) {
          actionsToRun += handle(input, &state, &size, &writer)
        }
      case .inputIdle:
        for input in decoder.flush() {
          actionsToRun += handle(input, &state, &size, &writer)
        }
      case .resize:
        size = io.size()
        writer.invalidate()
        _ = Reducer.reduce(&state, .resize(size), size: size)
      case .signal(let number):
        return .signal(number)
      case .inputClosed:
        return .inputClosed
      case .update(let update):
        Reducer.apply(update, to: &state, size: size)
      case .finished(let id, let message):
        let action = running.removeValue(forKey: id)?.action
        if let message {
          state.statusMessage = message
        } else if let action, let progress = Reducer.progressMessage(for: action),
          state.statusMessage == progress
        {
          state.statusMessage = nil
        }
      }
      for action in actionsToRun {
        if action == .quit { return .quit }
        let id = nextTask
        nextTask += 1
        let task = Task { [actions] in
          let message = await Self.perform(action, on: actions)
          continuation.yield(.finished(id: id, message: message))
        }
        running[id] = (action, task)
      }
      draw(state, size: size, writer: &writer)
    }
    return .inputClosed
  }

  /// A decoded input event; an in-band resize report also changes the size.
  private func handle(
    _ input: InputEvent, _ state: inout TUIState, _ size: inout TerminalSize,
    _ writer: inout ScreenWriter
  ) -> [TUIAction] {
    if case .resize(let reported) = input {
      size = reported
      writer.invalidate()
    }
    return Reducer.reduce(&state, input, size: size)
  }

  private func draw(_ state: TUIState, size: TerminalSize, writer: inout ScreenWriter) {
    let screen = Renderer.render(state, size: size, colour: colour)
    let bytes = writer.frame(for: screen, size: size)
    if !bytes.isEmpty { io.write(bytes) }
  }

  /// Runs one action; returns the status-line message when it failed.
  static func perform(_ action: TUIAction, on actions: any TUIActions) async -> String? {
    do {
      switch action {
      case .refresh:
        try await actions.refresh()
      case .syncNow:
        try await actions.syncNow()
      case .addArticle(let title, let body):
        try await actions.addArticle(title: title, body: body)
      case .editArticle(let id, let title, let body):
        try await actions.editArticle(id: id, title: title, body: body)
      case .deleteArticle(let id):
        try await actions.deleteArticle(id: id)
      case .upload(let path):
        try await actions.upload(path: path)
      case .quit:
        return nil
      }
      return nil
    } catch is CancellationError {
      return nil
    } catch {
      return "\(failureTitle(action)): \(message(for: error))"
    }
  }

  private static func failureTitle(_ action: TUIAction) -> String {
    switch action {
    case .refresh: return "Couldn't refresh"
    case .syncNow: return "Couldn't send the pending changes"
    case .addArticle: return "Couldn't add the article"
    case .editArticle: return "Couldn't save the article"
    case .deleteArticle: return "Couldn't delete the article"
    case .upload: return "Couldn't upload the photo"
    case .quit: return "Couldn't quit"
    }
  }

  /// The sentence for a person for any error: never a type name dump or a raw code.
  /// - Parameter error: the error.
  /// - Returns: the message.
  package static func message(for error: any Error) -> String {
    if let error = error as? CourierError { return UserMessages.message(for: error) }
    if let error = error as? TUIActionError { return error.message }
    if let error = error as? any LocalizedError, let description = error.errorDescription {
      return description
    }
    return "something went wrong."
  }
}

/// What the loop reacts to.
enum LoopEvent: Sendable {
  case bytes([UInt8])
  case inputIdle
  case resize
  case signal(Int32)
  case inputClosed
  case update(TUIUpdate)
  case finished(id: Int, message: String?)
}

/// Reads the keyboard and the signal pipe on a thread of its own that waits in `poll`, never in
/// `read`, so that `stop()` (a byte on a wake-up pipe) ends it at once.
final class InputReader: Sendable {
  private let io: TerminalIO
  private let continuation: AsyncStream<LoopEvent>.Continuation
  private let wakeRead: Int32
  private let wakeWrite: Int32

  init?(io: TerminalIO, continuation: AsyncStream<LoopEvent>.Continuation) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for descriptor in fds {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }
    self.io = io
    self.continuation = continuation
    self.wakeRead = fds[0]
    self.wakeWrite = fds[1]
  }

  deinit {
    close(wakeRead)
    close(wakeWrite)
  }

  func start() {
    DetachedThread.start(name: "courier-tui-in") { [self] in self.loop() }
  }

  func stop() {
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)
  }

  private func loop() {
    var descriptors = [
      pollfd(fd: io.inputFD, events: Int16(POLLIN), revents: 0),
      pollfd(fd: io.signalFD, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
    ]
    var timeout: Int32 = -1
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
      if ready < 0 {
        if errno == EINTR { continue }
        continuation.yield(.inputClosed)
        return
      }
      if ready == 0 {
        // Input went quiet after some bytes: a pending Escape is the Escape key.
        continuation.yield(.inputIdle)
        timeout = -1
        continue
      }
      if descriptors[2].revents != 0 { return }
      if descriptors[1].revents & Int16(POLLIN) != 0 {
        let count = read(io.signalFD, &buffer, buffer.count)
        for byte in buffer.prefix(max(0, count)) {
          continuation.yield(Int32(byte) == SIGWINCH ? .resize : .signal(Int32(byte)))
        }
      }
      if descriptors[0].revents != 0 {
        let count = read(io.inputFD, &buffer, buffer.count)
        if count > 0 {
          continuation.yield(.bytes(Array(buffer.prefix(count))))
          timeout = TUIEventLoop.escapeTimeoutMilliseconds
        } else if count < 0, errno == EINTR || errno == EAGAIN {
          continue
        } else {
          continuation.yield(.inputClosed)
          return
        }
      }
    }
  }
}
