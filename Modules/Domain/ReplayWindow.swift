/// The sends of one replay window as a value (decision 1204): which of its entries leave now,
/// up to `concurrency` at a time (one after another when 1), and when no more may leave: after
/// an answer whose step stops the pass (`halt` `.stop`), changes the queue (a re-send, a merge,
/// the server's copy taken, an edit against a deletion settled: `.reread`) or parks an entry
/// (`.probe`: the pass asks whether the server answers, decision 2401), or once the task is
/// cancelled. Sends already out finish. Pure: table-tested in `ReplayWindowTests`;
/// `ReplayWindowSender` sends what it says.
package struct ReplayWindow: Sendable {
  /// Why a window stopped sending.
  package enum Halt: Sendable, Equatable {
    /// A step changed the queue: the pass reads it again.
    case reread
    /// The pass stops with this error (transient, local, cancelled).
    case stop(CourierError)
    /// An entry is to be parked: nothing more leaves until the pass has probed the server.
    case probe
  }

  /// The first reason the window stopped sending, nil while it goes on.
  package private(set) var halt: Halt?
  private let count: Int
  private let concurrency: Int
  private var next = 0
  private var running = 0

  /// A window of `count` entries, up to `concurrency` on their way at once.
  package init(count: Int, concurrency: Int) {
    self.count = count
    self.concurrency = max(1, concurrency)
  }

  /// The entries (indices in the window) to send first.
  /// - Parameter cancelled: whether the task is cancelled.
  package mutating func start(cancelled: Bool) -> [Int] {
    launch(cancelled: cancelled)
  }

  /// An entry's answer was decided: the entries to send next.
  /// - Parameters:
  ///   - index: the entry's index in the window.
  ///   - step: what `ReplayDecision` decided.
  ///   - cancelled: whether the task is cancelled.
  package mutating func answered(_ index: Int, step: ReplayStep, cancelled: Bool) -> [Int] {
    running -= 1
    if halt == nil {
      switch step {
      case .stop(let error): halt = .stop(error)
      case .resend, .resendMerged, .takeServer, .recreate, .takeGone, .deleteAgain:
        halt = .reread
      case .park: halt = .probe
      case .complete, .keepConflict, .keepGone, .reject: break
      }
    }
    return launch(cancelled: cancelled)
  }

  /// Whether every entry that left has answered.
  package var isDone: Bool { running == 0 }

  private mutating func launch(cancelled: Bool) -> [Int] {
    if cancelled, halt == nil { halt = .stop(CourierError(.cancelled, context: "replay")) }
    guard halt == nil else { return [] }
    var leaving: [Int] = []
    while running < concurrency, next < count {
      leaving.append(next)
      next += 1
      running += 1
    }
    return leaving
  }
}
