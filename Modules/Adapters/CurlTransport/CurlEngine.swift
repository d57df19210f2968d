import CCurl
import CCurlShim
import CourierDomain
import CourierPorts
import CourierSystem
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// libcurl's global setup, done once before the first handle (thread-safe in libcurl ≥ 7.84).
/// Touched by the first transfer, not by the transport's creation: libcurl is loaded on first
/// use (decision 0504), and a command that sends nothing never loads it.
let curlGlobalInit: CURLcode = courier_curl_global_init()

/// The transport's side that callers touch: an inbox of commands for the thread that owns the
/// multi handle, and the means to wake that thread. Everything libcurl touches stays on that
/// one thread; the only call made from elsewhere is `curl_multi_wakeup`, which libcurl documents
/// as callable from any thread, and it is made under the inbox lock so the handle cannot be
/// freed meanwhile.
///
/// The thread is also a task executor (`CurlTransport.taskExecutor`): a job enqueued goes in the
/// inbox like a command and runs on the thread between two turns of libcurl. A task that sends
/// requests one after another from there is resumed by its answer on the thread that received
/// it, and its next request is handed over on the same thread: no thread is woken on either
/// side (decision 1204).
final class CurlEngine: TaskExecutor {
  enum Command: Sendable {
    case add(Transfer)
    case remove(Transfer)
    case run(UnownedJob)
    case stop
  }

  private struct Inbox {
    var commands: [Command] = []
    /// The multi handle's address while the thread runs; an integer because a pointer is not
    /// `Sendable`, and it is only used for `curl_multi_wakeup` under this lock.
    var multi: UInt?
    var threadRunning = false
    var active = 0
    var exitWaiters: [CheckedContinuation<Void, Never>] = []
  }

  let configuration: CurlTransport.Configuration
  private let inbox = Mutex(Inbox())

  init(configuration: CurlTransport.Configuration) {
    self.configuration = configuration
  }

  var activeTransfers: Int { inbox.withLock { $0.active } }

  func submit(_ transfer: Transfer) {
    post(.add(transfer), counting: 1, startIfNeeded: true)
  }

  func abandon(_ transfer: Transfer) {
    post(.remove(transfer), counting: 0, startIfNeeded: false)
  }

  func stop() {
    post(.stop, counting: 0, startIfNeeded: false)
  }

  /// Runs a job on the transport's thread (started if it is not running).
  func enqueue(_ job: consuming ExecutorJob) {
    post(.run(UnownedJob(job)), counting: 0, startIfNeeded: true)
  }

  func shutdown() async {
    await withCheckedContinuation { continuation in
      let running = inbox.withLock { inbox -> Bool in
        guard inbox.threadRunning else { return false }
        inbox.exitWaiters.append(continuation)
        inbox.commands.append(.stop)
        wake(inbox)
        return true
      }
      if !running { continuation.resume() }
    }
  }

  private func post(_ command: Command, counting: Int, startIfNeeded: Bool) {
    let start = inbox.withLock { inbox -> Bool in
      guard inbox.threadRunning || startIfNeeded else { return false }
      inbox.commands.append(command)
      inbox.active += counting
      wake(inbox)
      guard !inbox.threadRunning else { return false }
      inbox.threadRunning = true
      return true
    }
    if start { startThread() }
  }

  private func wake(_ inbox: borrowing Inbox) {
    if let address = inbox.multi, let multi = UnsafeMutableRawPointer(bitPattern: address) {
      curl_multi_wakeup(multi)
    }
  }

  private func startThread() {
    // Named, so a profile or `top -H` tells it from the pool's threads.
    DetachedThread.start(name: "courier-curl") { [self] in
      CurlLoop(engine: self).run()
    }
  }

  // MARK: the thread's side

  /// Publishes the multi handle, or withdraws it before it is freed.
  func attach(_ multi: UnsafeMutableRawPointer?) {
    inbox.withLock { $0.multi = multi.map { UInt(bitPattern: $0) } }
  }

  func takeCommands() -> [Command] {
    inbox.withLock { inbox in
      defer { inbox.commands = [] }
      return inbox.commands
    }
  }

  func requeue(_ commands: [Command]) {
    guard !commands.isEmpty else { return }
    inbox.withLock { $0.commands.insert(contentsOf: commands, at: 0) }
  }

  func released(_ count: Int) {
    guard count > 0 else { return }
    inbox.withLock { $0.active -= count }
  }

  /// Called by the thread as it ends: commands that came after `stop` start a new thread.
  func threadEnded() {
    let (restart, waiters) = inbox.withLock { inbox -> (Bool, [CheckedContinuation<Void, Never>]) in
      inbox.multi = nil
      let pending = inbox.commands.contains {
        switch $0 {
        case .add, .run: return true
        case .remove, .stop: return false
        }
      }
      inbox.threadRunning = pending
      defer { inbox.exitWaiters = [] }
      return (pending, inbox.exitWaiters)
    }
    for waiter in waiters { waiter.resume() }
    if restart { startThread() }
  }
}

/// The thread that owns the multi handle and every easy handle: adds and removes transfers as
/// commands arrive, drives libcurl, answers callers as transfers end, and enforces deadlines.
private final class CurlLoop {
  let engine: CurlEngine
  var transfers: [ObjectIdentifier: CurlEasy] = [:]
  var byHandle: [UnsafeMutableRawPointer: ObjectIdentifier] = [:]

  init(engine: CurlEngine) { self.engine = engine }

  func run() {
    guard let multi = curl_multi_init() else {
      // libcurl is loaded on first use (decision 0504): say which library is missing.
      let reason = courier_curl_load_error().map {
        "libcurl (libcurl.so.4) could not be loaded: \(String(cString: $0)). Install it "
          + "(Debian: apt install libcurl4) or choose the urlsession transport."
      }
      failAll(commands: engine.takeCommands(), reason: reason ?? "curl_multi_init failed")
      engine.threadEnded()
      return
    }
    let configuration = engine.configuration
    _ = courier_curl_multi_setopt_long(
      multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
    _ = courier_curl_multi_setopt_long(
      multi, CURLMOPT_MAXCONNECTS, max(4, configuration.maxConnectionsPerHost * 2))
    engine.attach(multi)
    var stopping = false
    let executor = engine.asUnownedTaskExecutor()
    while !stopping {
      // Until the inbox is empty (a job run here usually posts its next request), but a few
      // rounds at most, so that a task yielding in a loop here cannot starve libcurl: what is
      // left waits one turn (its post woke the poll below).
      var commands = engine.takeCommands()
      var rounds = 0
      while !commands.isEmpty, !stopping {
        rounds += 1
        for (number, command) in commands.enumerated() {
          switch command {
          case .add(let transfer): add(transfer, to: multi)
          case .remove(let transfer): remove(ObjectIdentifier(transfer), from: multi)
          case .run(let job): job.runSynchronously(on: executor)
          case .stop:
            stopping = true
            // What came after `stop` is for the next thread.
            engine.requeue(Array(commands[(number + 1)...]))
          }
          if stopping { break }
        }
        if !stopping, rounds < 8 { commands = engine.takeCommands() } else { commands = [] }
      }
      if stopping { break }
      var running: Int32 = 0
      _ = curl_multi_perform(multi, &running)
      collectFinished(multi)
      enforceDeadlines(multi)
      var ready: Int32 = 0
      _ = curl_multi_poll(multi, nil, 0, pollTimeout(), &ready)
    }
    for id in Array(transfers.keys) {
      transfers[id]?.transfer.finish(
        .failure(CourierError(.cancelled, underlying: "transport shut down")))
      remove(id, from: multi)
    }
    engine.attach(nil)
    curl_multi_cleanup(multi)
    engine.threadEnded()
  }

  private func add(_ transfer: Transfer, to multi: UnsafeMutableRawPointer) {
    guard !transfer.isFinished else {
      engine.released(1)
      return
    }
    let easy: CurlEasy
    do {
      easy = try CurlEasy(transfer, configuration: engine.configuration)
    } catch {
      transfer.finish(.failure(error))
      engine.released(1)
      return
    }
    let id = ObjectIdentifier(transfer)
    transfers[id] = easy
    byHandle[easy.handle] = id
    let code = curl_multi_add_handle(multi, easy.handle)
    if code != CURLM_OK {
      transfer.finish(
        .failure(
          CourierError(
            .connectionLost, underlying: "curl_multi_add_handle: \(code.rawValue)",
            context: transfer.context)))
      remove(id, from: multi)
    }
  }

  private func remove(_ id: ObjectIdentifier, from multi: UnsafeMutableRawPointer) {
    guard let easy = transfers.removeValue(forKey: id) else { return }
    byHandle[easy.handle] = nil
    curl_multi_remove_handle(multi, easy.handle)
    easy.cleanup()
    engine.released(1)
  }

  private func collectFinished(_ multi: UnsafeMutableRawPointer) {
    var left: Int32 = 0
    while let message = curl_multi_info_read(multi, &left) {
      guard courier_curl_msg_is_done(message) != 0, let handle = message.pointee.easy_handle,
        let id = byHandle[handle], let easy = transfers[id]
      else { continue }
      let code = courier_curl_msg_result(message)
      easy.transfer.finish(easy.result(code: Int(code.rawValue)))
      remove(id, from: multi)
    }
  }

  private func enforceDeadlines(_ multi: UnsafeMutableRawPointer) {
    let now = ContinuousClock.now
    for (id, easy) in transfers {
      if let deadline = easy.transfer.deadline, deadline <= now {
        easy.transfer.finish(easy.result(code: CurlErrorTable.Code.operationTimedOut))
        remove(id, from: multi)
      } else if let idle = easy.idleDeadline, idle <= now {
        // Nothing moved for the idle timeout (decision 1303): a dead link, a silent server.
        easy.idleExpired = true
        easy.transfer.finish(easy.result(code: CurlErrorTable.Code.operationTimedOut))
        remove(id, from: multi)
      }
    }
  }

  /// Sleeps until the nearest deadline or idle timeout at most (libcurl shortens it for its
  /// own timers).
  private func pollTimeout() -> Int32 {
    let now = ContinuousClock.now
    var wait: Duration = .seconds(1)
    for easy in transfers.values {
      if let deadline = easy.transfer.deadline { wait = min(wait, now.duration(to: deadline)) }
      if let idle = easy.idleDeadline { wait = min(wait, now.duration(to: idle)) }
    }
    return Int32(max(0, (wait.seconds * 1000).rounded(.up)))
  }

  private func failAll(commands: [CurlEngine.Command], reason: String) {
    for command in commands {
      switch command {
      case .add(let transfer):
        transfer.finish(
          .failure(CourierError(.connectionLost, underlying: reason, context: transfer.context)))
        engine.released(1)
      case .run(let job):
        // A task waiting to run here still runs: its request then fails as the others did.
        job.runSynchronously(on: engine.asUnownedTaskExecutor())
      case .remove, .stop:
        break
      }
    }
  }
}
