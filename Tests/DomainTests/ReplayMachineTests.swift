import CourierDomain
import Testing

/// The replayer's coordination, driven by event sequences: each step is an event and the
/// actions it returns (or the loop's next step, or the machine's state), written out as text.
/// Waiters are names; backoff draws are 0.5 (2 s → 1.5 s, 4 s → 3 s…). No clock, no transport,
/// no store.
@Suite("ReplayMachine")
struct ReplayMachineTests {
  typealias Machine = ReplayMachine<String>

  /// One event. A loop's wait is named (`next("L1")` decides it, `waits("L1")` parks the
  /// loop's waiter `L1`), as the shell's run loop does: decide, wait (woken or timer), end.
  enum Event: Sendable, CustomStringConvertible {
    case pass(String)
    case idle(String)
    case ended(ReplayReport)
    case write(PathStatus)
    case path(PathStatus?, PathStatus)
    case shown(PathStatus?, PathStatus)
    case sleepEnd(String)
    case watch
    case unwatch
    case refresh(started: Bool)
    case next(String)
    case waits(String, cancelled: Bool = false)
    case cancelWait(String)
    case fired(String)
    case waitEnded(String)
    /// The machine's counts: `failures N, retry X|due|none, syncing|idle`.
    case inspect

    var description: String {
      switch self {
      case .pass(let name): "pass \(name)"
      case .idle(let name): "idle \(name)"
      case .ended(let report): "ended \(report.stoppedBy?.kind.rawValue ?? "ok")"
      case .write(let path): "write \(path)"
      case .path(let from, let to): "path \(from.map(\.rawValue) ?? "-")→\(to)"
      case .shown(let from, let to): "shown \(from.map(\.rawValue) ?? "-")→\(to)"
      case .sleepEnd(let name): "sleep end \(name)"
      case .watch: "watch"
      case .unwatch: "unwatch"
      case .refresh(let started): started ? "refresh" : "refreshed"
      case .next(let name): "next \(name)"
      case .waits(let name, let cancelled): "waits \(name)\(cancelled ? " cancelled" : "")"
      case .cancelWait(let name): "cancel \(name)"
      case .fired(let name): "fired \(name)"
      case .waitEnded(let name): "ended \(name)"
      case .inspect: "inspect"
      }
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var path: PathStatus = .unknown
    /// Each event with what it returns: actions (`resume a b; publish`, "" for none), the
    /// loop's step (`pass`, `wait`, `wait 1500ms`), or the state for `inspect`.
    var steps: [(Event, String)]
    var testDescription: String { name }
  }

  static let ok = ReplayReport()

  static func stopped(
    _ kind: CourierError.Kind, pending: Int = 2, retryAfter: Duration? = nil
  ) -> ReplayReport {
    var report = ReplayReport()
    report.stoppedBy = CourierError(kind, retryAfter: retryAfter)
    report.pending = pending
    return report
  }

  static let rows: [Row] = [
    Row(
      name: "one pass at a time: the others get the slot in the order they asked",
      steps: [
        (.pass("r1"), "resume r1; publish"), (.inspect, "failures 0, retry none, syncing"),
        (.pass("r2"), ""), (.pass("r3"), ""), (.idle("i1"), ""),
        (.ended(ok), "resume r2"), (.ended(ok), "resume r3"),
        (.ended(ok), "resume i1; publish"), (.inspect, "failures 0, retry none, idle"),
        (.idle("i2"), "resume i2"),
      ]),
    Row(
      name: "a write wakes the run loop only while one watches and the path is usable",
      steps: [
        (.write(.satisfied), ""), (.watch, ""), (.next("L1"), "wait"), (.waits("L1"), ""),
        (.write(.unsatisfied), ""), (.write(.requiresConnection), ""),
        (.write(.unknown), "resume L1"), (.waitEnded("L1"), ""), (.next("L2"), "pass"),
        (.pass("loop"), "resume loop; publish"), (.ended(ok), "publish"),
        (.next("L3"), "wait"),
      ]),
    Row(
      name: "a write between deciding to wait and waiting is not lost",
      steps: [
        (.watch, ""), (.next("L1"), "wait"), (.write(.satisfied), ""),
        (.waits("L1"), "resume L1"), (.waitEnded("L1"), ""), (.next("L2"), "pass"),
      ]),
    Row(
      name: "a write during a pass asks for one more; one pass covers every request before it",
      steps: [
        (.watch, ""), (.write(.satisfied), ""), (.write(.satisfied), ""),
        (.next("L1"), "pass"), (.pass("loop"), "resume loop; publish"),
        (.write(.satisfied), ""), (.ended(ok), "publish"), (.next("L2"), "pass"),
        (.pass("loop"), "resume loop; publish"), (.ended(ok), "publish"), (.next("L3"), "wait"),
      ]),
    Row(
      name: "a transient stop arms a growing jittered backoff; its timer's end replays",
      steps: [
        (.watch, ""), (.next("L1"), "wait"), (.waits("L1"), ""),
        (.pass("r1"), "resume r1; publish"),
        (.ended(stopped(.overloaded)), "resume L1; publish"),
        (.inspect, "failures 1, retry 1500ms, idle"), (.waitEnded("L1"), ""),
        (.next("L2"), "wait 1500ms"), (.waits("L2"), ""),
        // The sleep ends first: the shell's group cancels the wake-up child, then says so.
        (.cancelWait("L2"), "resume L2"), (.fired("L2"), ""), (.waitEnded("L2"), ""),
        (.inspect, "failures 1, retry due, idle"), (.next("L3"), "pass"),
        (.pass("loop"), "resume loop; publish"), (.ended(stopped(.timedOut)), "publish"),
        (.next("L4"), "wait 3000ms"), (.waitEnded("L4"), ""), (.next("L5"), "wait 3000ms"),
        (.cancelWait("L5"), ""), (.fired("L5"), ""), (.waitEnded("L5"), ""),
        (.next("L6"), "pass"), (.pass("loop"), "resume loop; publish"),
        // The third: 4 s × 0.5 = 2 s, but the server's Retry-After of 7 s is the floor.
        (.ended(stopped(.overloaded, retryAfter: .seconds(7))), "publish"),
        (.next("L7"), "wait 8750ms"),
      ]),
    Row(
      name: "a pass that ends otherwise resets the count and drops the retry",
      steps: [
        (.watch, ""), (.pass("r"), "resume r; publish"), (.ended(stopped(.offline)), "publish"),
        (.pass("r"), "resume r; publish"), (.ended(stopped(.offline)), "publish"),
        (.inspect, "failures 2, retry 3000ms, idle"), (.pass("r"), "resume r; publish"),
        (.ended(ok), "publish"), (.inspect, "failures 0, retry none, idle"),
        (.pass("r"), "resume r; publish"), (.ended(stopped(.offline)), "publish"),
        (.pass("r"), "resume r; publish"), (.ended(stopped(.unauthorized)), "publish"),
        (.inspect, "failures 0, retry none, idle"), (.pass("r"), "resume r; publish"),
        (.ended(stopped(.offline, pending: 0)), "publish"),
        (.inspect, "failures 0, retry none, idle"),
      ]),
    Row(
      name: "a cancelled pass changes nothing",
      steps: [
        (.watch, ""), (.pass("r"), "resume r; publish"), (.ended(stopped(.offline)), "publish"),
        (.pass("r"), "resume r; publish"), (.ended(stopped(.cancelled)), "publish"),
        (.inspect, "failures 1, retry 1500ms, idle"),
      ]),
    Row(
      name: "a path change drops the retry and ends its sleep before the path is shown; the "
        + "path's return replays once shown",
      steps: [
        (.watch, ""), (.path(nil, .satisfied), ""), (.sleepEnd("f"), "resume f"),
        (.shown(nil, .satisfied), ""), (.pass("r"), "resume r; publish"),
        (.ended(stopped(.cannotReachHost)), "publish"), (.next("L1"), "wait 1500ms"),
        (.waits("L1"), ""), (.path(.satisfied, .unsatisfied), "resume L1"),
        (.inspect, "failures 0, retry none, idle"), (.sleepEnd("f"), ""),
        (.cancelWait("L1"), ""), (.waitEnded("L1"), "resume f"),
        (.shown(.satisfied, .unsatisfied), ""), (.next("L2"), "wait"), (.waits("L2"), ""),
        (.path(.unsatisfied, .satisfied), ""), (.sleepEnd("f"), "resume f"),
        (.shown(.unsatisfied, .satisfied), "resume L2"), (.waitEnded("L2"), ""),
        (.next("L3"), "pass"),
      ]),
    Row(
      name: "a pass whose outcome replaces a backoff being slept returns after that sleep ended",
      steps: [
        (.watch, ""), (.pass("r"), "resume r; publish"), (.ended(stopped(.overloaded)), "publish"),
        (.next("L1"), "wait 1500ms"), (.waits("L1"), ""), (.pass("r"), "resume r; publish"),
        (.ended(stopped(.overloaded)), "resume L1; publish"), (.sleepEnd("r"), ""),
        (.waitEnded("L1"), "resume r"), (.next("L2"), "wait 3000ms"),
      ]),
    Row(
      name: "a timer that runs out after its retry was dropped does nothing",
      steps: [
        (.watch, ""), (.pass("r"), "resume r; publish"), (.ended(stopped(.overloaded)), "publish"),
        (.next("L1"), "wait 1500ms"), (.waits("L1"), ""),
        (.path(.unknown, .requiresConnection), "resume L1"), (.fired("L1"), ""),
        (.waitEnded("L1"), ""), (.inspect, "failures 0, retry none, idle"),
        (.next("L2"), "wait"),
      ]),
    Row(
      name: "no backoff is armed, nor an armed one slept, while the path is known to be down",
      path: .unsatisfied,
      steps: [
        (.watch, ""), (.pass("r"), "resume r; publish"), (.ended(stopped(.offline)), "publish"),
        (.inspect, "failures 1, retry none, idle"), (.next("L1"), "wait"),
      ]),
    Row(
      name: "a loop that starts after a transient stop arms its retry; the first heard path "
        + "down keeps it unslept",
      steps: [
        (.pass("r"), "resume r; publish"), (.ended(stopped(.overloaded)), "publish"),
        (.inspect, "failures 1, retry none, idle"), (.watch, ""),
        (.inspect, "failures 1, retry 1500ms, idle"), (.path(nil, .unsatisfied), ""),
        (.next("L1"), "wait"), (.path(.unsatisfied, .satisfied), ""),
        (.inspect, "failures 0, retry none, idle"), (.shown(.unsatisfied, .satisfied), ""),
        (.next("L2"), "pass"),
      ]),
    Row(
      name: "a loop that starts while a pass runs does not arm the retry the pass will decide",
      steps: [
        (.pass("r"), "resume r; publish"), (.ended(stopped(.overloaded)), "publish"),
        (.pass("r"), "resume r; publish"), (.watch, ""),
        (.inspect, "failures 1, retry none, syncing"),
      ]),
    Row(
      name: "the last loop to end drops the retry",
      steps: [
        (.watch, ""), (.watch, ""), (.pass("r"), "resume r; publish"),
        (.ended(stopped(.overloaded)), "publish"), (.unwatch, ""),
        (.inspect, "failures 1, retry 1500ms, idle"), (.unwatch, ""),
        (.inspect, "failures 1, retry none, idle"), (.write(.satisfied), ""),
      ]),
    Row(
      name: "one loop sleeps the backoff; when its wait ends early another takes it",
      steps: [
        (.watch, ""), (.watch, ""), (.pass("r"), "resume r; publish"),
        (.ended(stopped(.overloaded)), "publish"), (.next("L1"), "wait 1500ms"),
        (.next("L2"), "wait"), (.waits("L1"), ""), (.waits("L2"), ""),
        (.cancelWait("L1"), "resume L1"), (.waitEnded("L1"), "resume L2"),
        (.waitEnded("L2"), ""), (.next("L3"), "wait 1500ms"),
      ]),
    Row(
      name: "a cancelled loop's wait resumes at once",
      steps: [(.watch, ""), (.next("L1"), "wait"), (.waits("L1", cancelled: true), "resume L1")]),
    Row(
      name: "refreshes and passes both count as syncing",
      steps: [
        (.refresh(started: true), "publish"), (.inspect, "failures 0, retry none, syncing"),
        (.pass("r"), "resume r; publish"), (.refresh(started: false), "publish"),
        (.inspect, "failures 0, retry none, syncing"), (.ended(ok), "publish"),
        (.inspect, "failures 0, retry none, idle"),
      ]),
  ]

  /// Drives a machine, keeping each named wait for the events that name it.
  struct Driver {
    var machine: Machine
    var waits: [String: Machine.LoopWait] = [:]

    mutating func apply(_ event: Event) -> String {
      switch event {
      case .pass(let name): return Self.text(machine.passRequested(name))
      case .idle(let name): return Self.text(machine.idleRequested(name))
      case .ended(let report): return Self.text(machine.passEnded(report, jitter: { 0.5 }))
      case .write(let path): return Self.text(machine.writeCommitted(path: path))
      case .path(let from, let to): return Self.text(machine.pathChanged(from: from, to: to))
      case .shown(let from, let to): return Self.text(machine.pathPublished(from: from, to: to))
      case .sleepEnd(let name): return Self.text(machine.sleepEndRequested(name))
      case .watch: return Self.text(machine.watchStarted(jitter: { 0.5 }))
      case .unwatch: return Self.text(machine.watchEnded())
      case .refresh(let started):
        return Self.text(started ? machine.refreshStarted() : machine.refreshEnded())
      case .next(let name):
        switch machine.loopNext() {
        case .pass: return "pass"
        case .wait(let wait):
          waits[name] = wait
          return wait.timer.map { "wait \(Int($0 / .milliseconds(1)))ms" } ?? "wait"
        }
      case .waits(let name, let cancelled):
        guard let wait = waits[name] else { return "no wait \(name)" }
        return Self.text(machine.loopWaits(wait, waiter: name, cancelled: cancelled))
      case .cancelWait(let name):
        guard let wait = waits[name] else { return "no wait \(name)" }
        return Self.text(machine.loopWaitCancelled(wait))
      case .fired(let name):
        guard let wait = waits[name] else { return "no wait \(name)" }
        return Self.text(machine.timerFired(wait))
      case .waitEnded(let name):
        guard let wait = waits[name] else { return "no wait \(name)" }
        return Self.text(machine.loopWaitEnded(wait))
      case .inspect:
        let retry =
          machine.isRetryDue
          ? "due" : machine.retryDelay.map { "\(Int($0 / .milliseconds(1)))ms" } ?? "none"
        return
          "failures \(machine.failedReplays), retry \(retry), "
          + (machine.isSyncing ? "syncing" : "idle")
      }
    }

    static func text(_ actions: [Machine.Action]) -> String {
      actions.map { action in
        switch action {
        case .resume(let waiters): "resume " + waiters.joined(separator: " ")
        case .publishActivity: "publish"
        }
      }.joined(separator: "; ")
    }
  }

  @Test("event sequences", arguments: rows)
  func sequences(_ row: Row) {
    var driver = Driver(machine: Machine(backoff: ReplayBackoff(), path: row.path))
    for (index, (event, expected)) in row.steps.enumerated() {
      let got = driver.apply(event)
      #expect(got == expected, "step \(index + 1): \(event)")
    }
  }

  @Test("a jitter is drawn only when a backoff is armed")
  func drawsOnlyWhenArming() {
    var machine = Machine(backoff: ReplayBackoff(), path: .satisfied)
    var draws = 0
    let draw = {
      draws += 1
      return 0.25
    }
    _ = machine.watchStarted(jitter: draw)
    for report in [Self.ok, Self.stopped(.unauthorized), Self.stopped(.cancelled)] {
      _ = machine.passRequested("r")
      _ = machine.passEnded(report, jitter: draw)
    }
    #expect(draws == 0)
    _ = machine.passRequested("r")
    _ = machine.passEnded(Self.stopped(.overloaded), jitter: draw)
    #expect(draws == 1 && machine.retryDelay == .milliseconds(1250))
  }

  @Test("usable paths: satisfied and unknown (never treated as offline)")
  func usablePaths() {
    #expect(PathStatus.allCases.filter(Machine.isUsable) == [.unknown, .satisfied])
  }
}
