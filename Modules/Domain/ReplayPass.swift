#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One pass over the outbox as a value (decisions 1204, 1205, 2301). It reads the outbox, picks
/// windows with `ReplaySchedule`, has each window's attempts counted before it leaves, sends it,
/// and settles its answers: every completion in one commit, then each other step. Windows are
/// pipelined: while one is on its way, the next is picked among the records not in flight (with
/// the size it will have if the one in flight ends cleanly) and counted, but only after a window
/// of the same read ended cleanly; it leaves as soon as the one in flight has every answer and
/// none of them stops the pass or changes the queue, and the finished window is settled while it
/// goes. A window starts at one entry and doubles after each clean one, up to `maxWindow`.
///
/// An entry to be parked (its replies proved nothing after its bounded attempts, decision 2401)
/// stops its window; once the window is settled the pass probes the server: when the server
/// itself answers, the entry is parked and the outbox read again (the writes behind it that do
/// not depend on it go on); otherwise the pass stops and the entry stays pending.
///
/// Each method is an event (the outbox read, attempts counted, a window left, its answers came,
/// completions committed, a step recorded, a store failure, cancellation) and returns the one
/// thing the shell does next. Pure: table-tested in `ReplayPassTests`, without a store or a
/// transport; the replayer carries the actions out.
package struct ReplayPass {
  /// What the shell does next.
  package enum Action: Equatable, Sendable {
    /// Read the outbox (`read(_:)`).
    case read
    /// Remove the picks' superseded entries, then count the picks' attempts in one commit
    /// (`counted(_:)`).
    case count([ReplaySchedule.Pick])
    /// Send these entries as a window, in the background of the pass (`launched()`); `resends`
    /// are the pass's re-sends per entry so far, for `ReplayDecision`.
    case send([OutboxEntry], resends: [UUID: Int])
    /// Wait for the answers of the window on its way (`answered(_:halt:)`).
    case awaitAnswers
    /// Commit these completions in one commit and publish `delivered` fewer pending entries
    /// (`completed(_:)`).
    case complete([OutboxCompletion], delivered: Int)
    /// Carry out one step other than a completion against the store (`recorded(_:)`).
    case record(ReplayOutcome)
    /// Ask whether the server itself answers, about this outcome's record (`probed(_:)`): its
    /// entry is to be parked (`ReplayStep.park`).
    case probe(ReplayOutcome)
    /// The pass is over: cancel a window still on its way, and report.
    case finish(ReplayReport)
  }

  /// A window whose picks are counted (or being counted), ready to leave or on its way.
  private struct Flight {
    var picks: [ReplaySchedule.Pick]
    var attempted: [OutboxEntry]
    /// An entry of the window went away since the read (another process coalesced it).
    var isShort: Bool { attempted.count < picks.count }
  }

  /// A window that answered, being settled: its completions first, then its other steps.
  private struct Settling {
    var flight: Flight
    var halt: ReplayWindow.Halt?
    var completions: [ReplayOutcome]
    var steps: [ReplayOutcome]
    /// Entries to park once the server is shown to answer.
    var parks: [ReplayOutcome]
    /// Whether the probe was asked for (and the parks are being recorded).
    var probed = false
  }

  private let sequential: Bool
  private let maxWindow: Int
  private let routed: (OutboxEntry) -> Bool
  private var windowSize = 1
  private var report = ReplayReport()
  private var resends: [UUID: Int] = [:]
  /// Why the pass ends early, once something stopped it.
  private var ending: CourierError?
  // One read of the outbox.
  private var schedule = ReplaySchedule([])
  private var rereading = false
  private var unrouted = 0
  private var didWork = false
  private var clean = 0
  private var exhausted = false
  private var counting: [ReplaySchedule.Pick]?
  private var ready: Flight?
  private var flying: Flight?
  private var answered: Settling?
  private var settling: Settling?

  /// Starts a pass.
  /// - Parameters:
  ///   - concurrency: sends at once; 1 sends each window in its order (the global order).
  ///   - maxWindow: the most entries of one window.
  ///   - routed: whether an entry's collection has a route; one that has none waits, with its
  ///     record's later entries, and is counted in `withoutSender`.
  package init(
    concurrency: Int, maxWindow: Int, routed: @escaping (OutboxEntry) -> Bool = { _ in true }
  ) {
    sequential = concurrency <= 1
    self.maxWindow = max(1, maxWindow)
    self.routed = routed
  }

  /// The first action: read the outbox.
  package mutating func start() -> Action { .read }

  /// The outbox was read.
  /// - Parameter entries: every entry, in queue order.
  package mutating func read(_ entries: [OutboxEntry]) -> Action {
    schedule = ReplaySchedule(entries)
    (unrouted, didWork, clean, exhausted) = (0, false, 0, false)
    (counting, ready, flying) = (nil, nil, nil)
    return next()
  }

  /// The picks' attempts were counted.
  /// - Parameter attempted: the entries still in the outbox, their attempt counted.
  package mutating func counted(_ attempted: [OutboxEntry]) -> Action {
    ready = Flight(picks: counting ?? [], attempted: attempted)
    counting = nil
    return next()
  }

  /// The window of the last `send` left.
  package mutating func launched() -> Action {
    flying = ready
    ready = nil
    return next()
  }

  /// The window on its way answered.
  /// - Parameters:
  ///   - outcomes: each sent entry's answer and step, in the order they came.
  ///   - halt: why the window stopped sending, if it did.
  package mutating func answered(_ outcomes: [ReplayOutcome], halt: ReplayWindow.Halt?) -> Action {
    guard let flight = flying else { return next() }
    flying = nil
    answered = Settling(
      flight: flight, halt: halt, completions: outcomes.filter { $0.step.completed != nil },
      steps: outcomes.filter(\.step.isRecorded), parks: outcomes.filter(\.step.isPark))
    // The next window leaves now, while this one is settled.
    if halt == nil, !flight.isShort, let next = ready {
      return .send(next.attempted, resends: resends)
    }
    return next()
  }

  /// The window's completions were committed.
  /// - Parameter rebases: the rebases they made (applied to the entries not yet picked).
  package mutating func completed(_ rebases: [OutboxRebase]) -> Action {
    schedule.apply(rebases)
    let completions = settling?.completions ?? []
    report.sent += completions.count
    // An edit the server re-created from a deletion, kept by last write wins (decision 2401).
    let recreated = completions.filter {
      if case .recreated = $0.answer { true } else { false }
    }.count
    report.conflictsRecreated += recreated
    report.conflictsGone += recreated
    return next()
  }

  /// One step was carried out.
  /// - Parameter outcome: the outcome with the step the store carried out (a merge the store
  ///   could not make is kept as a conflict).
  package mutating func recorded(_ outcome: ReplayOutcome) -> Action {
    let id = outcome.entry.id
    switch outcome.step {
    case .resend:
      resends[id, default: 0] += 1
      report.conflictsResent += 1
    case .resendMerged:
      resends[id, default: 0] += 1
      report.conflictsMerged += 1
    case .takeServer:
      report.conflictsTakenFromServer += 1
    case .keepConflict:
      report.conflictsKept += 1
      schedule.hold(outcome.entry.key)
    case .reject:
      report.rejected += 1
    case .recreate:
      report.conflictsRecreated += 1
      report.conflictsGone += 1
    case .takeGone, .deleteAgain:
      report.conflictsTakenFromServer += 1
      report.conflictsGone += 1
      report.conflictsGoneDropped += 1
    case .keepGone:
      report.conflictsKept += 1
      report.conflictsGone += 1
      schedule.hold(outcome.entry.key)
    case .park:
      report.parked += 1
      schedule.hold(outcome.entry.key)
    case .complete, .stop:
      break
    }
    return next()
  }

  /// The server was probed, for the entries to park.
  /// - Parameter failure: nil when the server itself answered; else why not (the pass stops
  ///   with it, and the entries stay pending).
  package mutating func probed(_ failure: CourierError?) -> Action {
    guard var window = settling, !window.parks.isEmpty else { return next() }
    if let failure {
      window.parks = []
      settling = window
      return stop(failure)
    }
    window.probed = true
    settling = window
    return next()
  }

  /// The store failed (reading, counting or recording): the pass stops with this error.
  package mutating func failed(_ error: CourierError) -> Action {
    (answered, settling) = (nil, nil)
    return stop(error)
  }

  /// The task was cancelled: a window that answered is still settled, nothing more leaves, and
  /// the pass stops.
  package mutating func cancelled() -> Action {
    stop(CourierError(.cancelled, context: "replay"))
  }

  private mutating func stop(_ error: CourierError) -> Action {
    if ending == nil { ending = error }
    (counting, ready) = (nil, nil)
    return next()
  }

  /// The next action from the state: settle a window that answered, end, read again, count the
  /// next window, send it, or wait for the one on its way.
  private mutating func next() -> Action {
    if let action = settle() { return action }
    if let ending { return finish(ending) }
    if rereading {
      rereading = false
      return .read
    }
    if ready == nil, !exhausted, flying == nil || clean > 0 {
      // Counted ahead, a window has the size it will have if the one in flight ends cleanly:
      // the sizes are those of one window at a time.
      let limit = flying == nil ? windowSize : min(windowSize * 2, maxWindow)
      let picks = schedule.nextWindow(
        limit: limit, sequential: sequential, routed: routed, unrouted: &unrouted)
      report.withoutSender = unrouted
      if !picks.isEmpty {
        didWork = true
        counting = picks
        return .count(picks)
      }
      // Nothing can go before the window in flight settles, or nothing is left.
      exhausted = flying == nil
    }
    if flying != nil { return .awaitAnswers }
    if let ready { return .send(ready.attempted, resends: resends) }
    // Writes made during the pass are in the next read; a read with nothing to do ends it.
    return didWork ? .read : finish(nil)
  }

  /// The settlement's next action, or nil when no window is being settled.
  private mutating func settle() -> Action? {
    if let window = answered {
      answered = nil
      settling = window
      if !window.completions.isEmpty {
        let delivered = window.completions.filter {
          switch $0.answer {
          case .delivered, .recreated: true
          case .failed: false
          }
        }
        return .complete(
          window.completions.map {
            OutboxCompletion(entry: $0.entry, serverRecord: $0.step.completed ?? nil)
          }, delivered: delivered.count)
      }
    }
    guard var window = settling else { return nil }
    if !window.steps.isEmpty {
      let step = window.steps.removeFirst()
      settling = window
      return .record(step)
    }
    if let park = window.parks.first {
      // Parked only once the server is shown to answer: a portal answers every write alike.
      guard window.probed else { return ending == nil ? .probe(park) : nil }
      window.parks.removeFirst()
      settling = window
      return .record(park)
    }
    settling = nil
    // The window's records may be picked again.
    schedule.settle(window.flight.picks.map(\.entry.key))
    switch window.halt {
    case .stop(let error)?: return stop(error)
    case .reread?, .probe?:
      // The queue changed, or an entry was parked: what the window did not send goes again.
      rereading = true
      return nil
    case nil: break
    }
    // An entry coalesced away since the read (another process's write): read again.
    if window.flight.isShort {
      rereading = true
      return nil
    }
    clean += 1
    windowSize = min(windowSize * 2, maxWindow)
    exhausted = false
    return nil
  }

  private mutating func finish(_ error: CourierError?) -> Action {
    var final = report
    final.stoppedBy = error
    return .finish(final)
  }
}

extension ReplayStep {
  /// The server's record of a completion (itself nil for a delete); nil for any other step.
  fileprivate var completed: ServerRecord?? {
    if case .complete(let server) = self { server } else { nil }
  }

  /// Whether the store records this step one entry at a time (every step but a completion,
  /// committed with its window's, and a stop, which only ends the pass).
  fileprivate var isRecorded: Bool {
    switch self {
    case .complete, .stop, .park: false
    case .resend, .resendMerged, .takeServer, .keepConflict, .reject, .recreate, .takeGone,
      .deleteAgain, .keepGone:
      true
    }
  }

  /// Whether the step parks the entry (recorded once the server is shown to answer).
  fileprivate var isPark: Bool {
    if case .park = self { true } else { false }
  }
}
