import CourierDomain
import Foundation
import Testing

/// One pass, driven by event sequences: each step is an event and the action it returns, as
/// text. Entries are named as in `ReplayScheduleTests` (`a1` is record `a`'s first write, `x:u1`
/// a record of collection `x`, `:rejected`/`:conflicted` its state), each on base version 1.
/// No store, no transport.
@Suite("ReplayPass")
struct ReplayPassTests {
  enum Event: Sendable, CustomStringConvertible {
    case read([String])
    /// Every pick counted; or every pick but one (another process coalesced it away).
    case counted
    case countedWithout(String)
    case launched
    /// `a1=done b1=offline…` in the order the answers came (`done`, `gone` for a delete
    /// already applied, `refused`, `kept`, `resend`, `merged`, `theirs`, `offline`; against a
    /// deletion `recreated` (the server made it anew, last write wins), `recreate`, `takegone`,
    /// `deleteagain`, `keepgone`; `park` for a reply that proved nothing at its bound); `!` at
    /// the end: the task was cancelled by the last answer.
    case answered(String)
    case completed
    /// The completion of record `a`'s write moved its later entries to version 2.
    case completedRebasingA
    case recorded
    /// The store could not merge: the conflict was kept instead.
    case recordedAsKept
    case failed
    case cancelled
    /// The probe: the server itself answered, or not (a page: `notTheServer`).
    case probed
    case probeFailed

    var description: String {
      switch self {
      case .read(let specs): "read \(specs.joined(separator: " "))"
      case .counted: "counted"
      case .countedWithout(let label): "counted without \(label)"
      case .launched: "launched"
      case .answered(let answers): "answered \(answers)"
      case .completed: "completed"
      case .completedRebasingA: "completed, a rebased"
      case .recorded: "recorded"
      case .recordedAsKept: "recorded as kept"
      case .failed: "failed"
      case .cancelled: "cancelled"
      case .probed: "probed"
      case .probeFailed: "probe failed"
      }
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var concurrency = 1
    var maxWindow = 256
    var unroutedCollections: Set<String> = []
    var steps: [(Event, String)]
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "an empty outbox: one read, nothing sent",
      steps: [(.read([]), "finish sent 0")]),
    Row(
      name: "sequential: windows of 1, 2, 4; the next counted while one goes, after a clean one",
      steps: [
        (.read(["a1", "b1", "c1", "d1", "e1", "f1", "g1"]), "count a1"), (.counted, "send a1"),
        // Nothing is counted ahead of a window before one of this read ended cleanly.
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"),
        // Counted ahead with the size it will have if this one ends cleanly.
        (.launched, "count d1 e1 f1 g1"), (.counted, "await"),
        // It leaves at once, and the one that answered is settled while it goes.
        (.answered("b1=done c1=done"), "send d1 e1 f1 g1"),
        (.launched, "complete b1 c1, 2 delivered"), (.completed, "await"),
        (.answered("d1=done e1=done f1=done g1=done"), "complete d1 e1 f1 g1, 4 delivered"),
        // Writes made during the pass are in the next read; a read with nothing ends it.
        (.completed, "read"), (.read([]), "finish sent 7"),
      ]),
    Row(
      name: "a transient failure stops the pass; the window counted ahead is not sent",
      steps: [
        (.read(["a1", "b1", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1"),
        (.counted, "await"), (.answered("b1=done c1=offline"), "complete b1, 1 delivered"),
        (.completed, "finish sent 2, stopped offline"),
      ]),
    Row(
      name: "sequential: a window stops at the first entry of a record already in it or in flight",
      steps: [
        (.read(["a1", "b1", "b2", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1"), (.counted, "send b1"),
        // b2 is not counted ahead: its record is in flight and the order is global.
        (.launched, "await"), (.answered("b1=done"), "complete b1, 1 delivered"),
        (.completed, "count b2 c1 d1"),
      ]),
    Row(
      name: "a completion's rebase moves its record's next entry before it is picked",
      steps: [
        (.read(["a1", "a2"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=done"), "complete a1, 1 delivered"), (.completedRebasingA, "count a2@v2"),
      ]),
    Row(
      name: "concurrent: one entry per record per window, the others of a record after it",
      concurrency: 4,
      steps: [
        (.read(["a1", "a2", "b1", "c1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count a2 b1"), (.counted, "send a2 b1"), (.launched, "count c1"),
        (.counted, "await"), (.answered("b1=done a2=done"), "send c1"),
        (.launched, "complete b1 a2, 2 delivered"),
      ]),
    Row(
      name: "a refusal is recorded and the queue goes on",
      steps: [
        (.read(["a1", "b1", "c1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=refused"), "record reject a1"), (.recorded, "count b1 c1"),
        (.counted, "send b1 c1"), (.launched, "await"),
        (.answered("b1=done c1=done"), "complete b1 c1, 2 delivered"), (.completed, "read"),
        (.read(["a1:rejected"]), "finish sent 2, rejected 1"),
      ]),
    Row(
      name: "a conflict re-sent reads the outbox again and sends it with its re-send counted",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=resend"), "record resend a1"), (.recorded, "read"),
        // Not a clean window: the next is still of one entry.
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1, a1 re-sent 1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1"), (.counted, "send b1"), (.launched, "await"),
        (.answered("b1=done"), "complete b1, 1 delivered"), (.completed, "read"),
        (.read([]), "finish sent 2, re-sent 1"),
      ]),
    Row(
      name: "a merge, and the server's copy taken, each read the outbox again",
      steps: [
        (.read(["a1", "b1", "c1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=done"), "complete a1, 1 delivered"), (.completed, "count b1 c1"),
        (.counted, "send b1 c1"), (.launched, "await"),
        (.answered("b1=merged c1=theirs"), "record merge b1"), (.recorded, "record theirs c1"),
        (.recorded, "read"), (.read([]), "finish sent 1, merged 1, theirs 1"),
      ]),
    Row(
      name: "a kept conflict holds its record's later entries; other records go on",
      steps: [
        (.read(["a1", "a2", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=kept"), "record keep a1"), (.recorded, "count b1"),
        (.counted, "send b1"), (.launched, "await"),
        (.answered("b1=done"), "complete b1, 1 delivered"), (.completed, "read"),
        (.read(["a1:conflicted", "a2"]), "finish sent 1, kept 1"),
      ]),
    Row(
      name: "a merge the store cannot make is kept, and holds its record",
      steps: [
        (.read(["a1", "a2", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=merged"), "record merge a1"), (.recordedAsKept, "read"),
        (.read(["a1:conflicted", "a2", "b1"]), "count b1"),
      ]),
    Row(
      name: "a delete already gone is complete but not a delivered reply",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=gone"), "complete a1, 0 delivered"), (.completed, "count b1"),
      ]),
    Row(
      name: "a newer write supersedes its record's refused entry",
      steps: [(.read(["a1:rejected", "a2", "b1"]), "count a2<a1")]),
    Row(
      name: "a collection without a route waits, counted; the pass is not stopped by it",
      unroutedCollections: ["x"],
      steps: [
        (.read(["x:u1", "x:u2", "a1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "read"), (.read(["x:u1", "x:u2"]), "finish sent 1, without sender 1"),
      ]),
    Row(
      name: "an entry gone since the read: the rest is sent, then the outbox read again",
      steps: [
        (.read(["a1", "b1", "c1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=done"), "complete a1, 1 delivered"), (.completed, "count b1 c1"),
        (.countedWithout("b1"), "send c1"), (.launched, "await"),
        (.answered("c1=done"), "complete c1, 1 delivered"), (.completed, "read"),
      ]),
    Row(
      name: "a window that changes the queue: the one counted ahead does not leave",
      steps: [
        (.read(["a1", "b1", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1"),
        (.counted, "await"), (.answered("b1=done c1=theirs"), "complete b1, 1 delivered"),
        (.completed, "record theirs c1"), (.recorded, "read"),
      ]),
    Row(
      name: "windows double up to the most allowed", maxWindow: 2,
      steps: [
        (.read(["a1", "b1", "c1", "d1", "e1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1 e1"),
      ]),
    Row(
      name: "the store fails counting attempts: the pass stops",
      steps: [(.read(["a1"]), "count a1"), (.failed, "finish sent 0, stopped localStore")]),
    Row(
      name: "the store fails committing completions: the pass stops, the window going is dropped",
      steps: [
        (.read(["a1", "b1", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1"),
        (.counted, "await"), (.answered("b1=done c1=done"), "send d1"),
        (.launched, "complete b1 c1, 2 delivered"), (.failed, "finish sent 1, stopped localStore"),
      ]),
    Row(
      name: "cancelled when the next window would leave: the one that answered is still settled",
      steps: [
        (.read(["a1", "b1", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1"),
        (.counted, "await"), (.answered("b1=done c1=done"), "send d1"),
        (.cancelled, "complete b1 c1, 2 delivered"),
        (.completed, "finish sent 3, stopped cancelled"),
      ]),
    Row(
      name: "cancelled during a window's sends: what answered is settled, then the pass stops",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=done!"), "complete a1, 1 delivered"),
        (.completed, "finish sent 1, stopped cancelled"),
      ]),
    // Decision 2401: an edit against a deletion, and a write whose replies prove nothing.
    Row(
      name: "an edit the server re-created (last write wins) completes, counted as re-created",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=recreated"), "complete a1, 1 delivered"), (.completed, "count b1"),
        (.counted, "send b1"), (.launched, "await"),
        (.answered("b1=done"), "complete b1, 1 delivered"), (.completed, "read"),
        (.read([]), "finish sent 2, recreated 1, gone 1"),
      ]),
    Row(
      name: "an edit against a deletion sent again as a create reads the outbox again",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=recreate"), "record recreate a1"), (.recorded, "read"),
        (.read(["a1", "b1"]), "count a1"),
      ]),
    Row(
      name: "the deletion taken, or a re-creation deleted again: counted as the server's",
      steps: [
        (.read(["a1", "b1", "c1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=done"), "complete a1, 1 delivered"), (.completed, "count b1 c1"),
        (.counted, "send b1 c1"), (.launched, "await"),
        (.answered("b1=takegone c1=deleteagain"), "record takegone b1"),
        (.recorded, "record deleteagain c1"), (.recorded, "read"),
        (.read([]), "finish sent 1, theirs 2, gone 2, dropped 2"),
      ]),
    Row(
      name: "an edit against a deletion kept for the user holds its record; the others go on",
      steps: [
        (.read(["a1", "a2", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=keepgone"), "record keepgone a1"), (.recorded, "count b1"),
        (.counted, "send b1"), (.launched, "await"),
        (.answered("b1=done"), "complete b1, 1 delivered"), (.completed, "read"),
        (.read(["a1:conflicted", "a2"]), "finish sent 1, kept 1, gone 1"),
      ]),
    Row(
      name: "an entry to park: the server answers the probe, it is parked, the others go on",
      steps: [
        (.read(["a1", "a2", "b1", "c1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=park"), "probe a1"), (.probed, "record park a1"),
        // What the window did not send goes again, from a new read.
        (.recorded, "read"), (.read(["a1:parked", "a2", "b1", "c1"]), "count b1"),
        (.counted, "send b1"), (.launched, "await"),
        (.answered("b1=done"), "complete b1, 1 delivered"), (.completed, "count c1"),
        (.counted, "send c1"), (.launched, "await"),
        (.answered("c1=done"), "complete c1, 1 delivered"), (.completed, "read"),
        (.read(["a1:parked", "a2"]), "finish sent 2, parked 1"),
      ]),
    Row(
      name: "an entry to park: the server does not answer the probe, the pass stops",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=park"), "probe a1"),
        (.probeFailed, "finish sent 0, stopped notTheServer"),
      ]),
    Row(
      name: "a window's completions and steps are settled before the probe",
      concurrency: 3,
      steps: [
        (.read(["a1", "b1", "c1", "d1"]), "count a1"), (.counted, "send a1"),
        (.launched, "await"), (.answered("a1=done"), "complete a1, 1 delivered"),
        (.completed, "count b1 c1"), (.counted, "send b1 c1"), (.launched, "count d1"),
        (.counted, "await"), (.answered("b1=park c1=refused"), "record reject c1"),
        (.recorded, "probe b1"), (.probed, "record park b1"), (.recorded, "read"),
      ]),
    Row(
      name: "cancelled before the probe: nothing is parked",
      steps: [
        (.read(["a1", "b1"]), "count a1"), (.counted, "send a1"), (.launched, "await"),
        (.answered("a1=park"), "probe a1"), (.cancelled, "finish sent 0, stopped cancelled"),
      ]),
    Row(
      name: "cancelled before a read: nothing is read",
      steps: [(.cancelled, "finish sent 0, stopped cancelled")]),
  ]

  /// Drives a pass, naming entries by label.
  struct Driver {
    var pass: ReplayPass
    var labels: [UUID: String] = [:]
    var entries: [String: OutboxEntry] = [:]
    var picks: [ReplaySchedule.Pick] = []
    var recording: ReplayOutcome?

    mutating func apply(_ event: Event) throws -> String {
      switch event {
      case .read(let specs):
        let read = specs.enumerated().map { ReplayScheduleTests.entry($1, sequence: Int64($0 + 1)) }
        for (spec, entry) in zip(specs, read) {
          let label = spec.split(separator: ":").map(String.init).first { $0.count == 2 } ?? spec
          labels[entry.id] = label
          entries[label] = entry
        }
        return text(pass.read(read))
      case .counted:
        return text(pass.counted(picks.map(\.entry).map(Self.attempted)))
      case .countedWithout(let label):
        let kept = picks.map(\.entry).filter { labels[$0.id] != label }
        return text(pass.counted(kept.map(Self.attempted)))
      case .launched:
        return text(pass.launched())
      case .answered(let spec):
        return try text(answered(spec))
      case .completed:
        return text(pass.completed([]))
      case .completedRebasingA:
        let a1 = try #require(entries["a1"])
        let server = ServerRecord(id: "a", payload: .object(["v": .number(2)]), version: 2)
        return text(
          pass.completed([
            OutboxRebase(key: a1.key, completed: a1.sequence, fromVersion: 1, server: server)
          ]))
      case .recorded:
        return text(pass.recorded(try #require(recording)))
      case .recordedAsKept:
        var kept = try #require(recording)
        kept.step = .keepConflict(current: .null, adopting: nil)
        return text(pass.recorded(kept))
      case .failed:
        return text(pass.failed(CourierError(.localStore)))
      case .cancelled:
        return text(pass.cancelled())
      case .probed:
        return text(pass.probed(nil))
      case .probeFailed:
        return text(pass.probed(CourierError(.notTheServer, code: "reply_not_json")))
      }
    }

    static func attempted(_ entry: OutboxEntry) -> OutboxEntry {
      var attempted = entry
      attempted.attempts += 1
      return attempted
    }

    /// The answers as the window's sends produce them, with the halt `ReplayWindow` gives.
    mutating func answered(_ spec: String) throws -> ReplayPass.Action {
      let cancelled = spec.hasSuffix("!")
      let pairs = spec.dropLast(cancelled ? 1 : 0).split(separator: " ")
      var window = ReplayWindow(count: pairs.count, concurrency: pairs.count)
      _ = window.start(cancelled: false)
      var outcomes: [ReplayOutcome] = []
      for (index, pair) in pairs.enumerated() {
        let parts = pair.split(separator: "=").map(String.init)
        let entry = try #require(entries[parts[0]])
        let (answer, step) = Self.answer(parts[1], entry)
        outcomes.append(ReplayOutcome(entry: Self.attempted(entry), answer: answer, step: step))
        _ = window.answered(index, step: step, cancelled: cancelled && index == pairs.count - 1)
      }
      return pass.answered(outcomes, halt: window.halt)
    }

    static func answer(_ name: String, _ entry: OutboxEntry) -> (ReplayAnswer, ReplayStep) {
      let server = ServerRecord(id: entry.key.id, payload: .object([:]), version: 2)
      let refusal = CourierError(.business, status: 422, code: "no", serverMessage: "No.")
      switch name {
      case "done": return (.delivered(server), .complete(serverRecord: server))
      case "gone":
        return (.failed(CourierError(.business, status: 404)), .complete(serverRecord: nil))
      case "refused": return (.failed(refusal), .reject(message: "No.", code: "no"))
      case "kept":
        return (.failed(CourierError(.conflict)), .keepConflict(current: .null, adopting: server))
      case "resend":
        return (.failed(CourierError(.conflict)), .resend(baseVersion: 2, adopting: server))
      case "merged":
        return (
          .failed(CourierError(.conflict)), .resendMerged(payload: .object([:]), onto: server)
        )
      case "theirs": return (.failed(CourierError(.conflict)), .takeServer(server))
      case "recreated":
        let made = ServerRecord(id: entry.key.id, payload: .object([:]), version: 1)
        return (.recreated(made), .complete(serverRecord: made))
      case "recreate": return (.failed(CourierError(.business, status: 404)), .recreate)
      case "takegone": return (.failed(CourierError(.business, status: 404)), .takeGone)
      case "deleteagain": return (.recreated(server), .deleteAgain(server))
      case "keepgone":
        return (.failed(CourierError(.business, status: 404)), .keepGone(adopting: nil))
      case "park":
        let error = CourierError(.notTheServer, code: "reply_stale_version")
        return (.failed(error), .park(error))
      default:
        let error = CourierError(.offline)
        return (.failed(error), .stop(error))
      }
    }

    func label(_ entry: OutboxEntry) -> String {
      let own = labels[entry.id] ?? "?"
      let base = entry.operation.baseVersion
      return base == 1 ? own : "\(own)@v\(base.map(String.init) ?? "-")"
    }

    mutating func text(_ action: ReplayPass.Action) -> String {
      switch action {
      case .read: return "read"
      case .count(let picks):
        self.picks = picks
        return "count "
          + picks.map { pick in
            ([label(pick.entry)] + pick.superseded.map { labels[$0] ?? "?" }).joined(separator: "<")
          }.joined(separator: " ")
      case .send(let entries, let resends):
        let again = entries.compactMap { entry in
          resends[entry.id].map { "\(labels[entry.id] ?? "?") re-sent \($0)" }
        }
        return (["send " + entries.map(label).joined(separator: " ")] + again)
          .joined(separator: ", ")
      case .awaitAnswers: return "await"
      case .complete(let completions, let delivered):
        return "complete \(completions.map { label($0.entry) }.joined(separator: " ")), "
          + "\(delivered) delivered"
      case .record(let outcome):
        recording = outcome
        let name =
          switch outcome.step {
          case .reject: "reject"
          case .resend: "resend"
          case .resendMerged: "merge"
          case .takeServer: "theirs"
          case .keepConflict: "keep"
          case .complete: "complete"
          case .stop: "stop"
          case .recreate: "recreate"
          case .takeGone: "takegone"
          case .deleteAgain: "deleteagain"
          case .keepGone: "keepgone"
          case .park: "park"
          }
        return "record \(name) \(label(outcome.entry))"
      case .probe(let outcome):
        return "probe \(label(outcome.entry))"
      case .finish(let report):
        var parts = ["finish sent \(report.sent)"]
        for (count, name) in [
          (report.rejected, "rejected"), (report.conflictsResent, "re-sent"),
          (report.conflictsMerged, "merged"), (report.conflictsTakenFromServer, "theirs"),
          (report.conflictsKept, "kept"), (report.conflictsRecreated, "recreated"),
          (report.conflictsGone, "gone"), (report.conflictsGoneDropped, "dropped"),
          (report.parked, "parked"), (report.withoutSender, "without sender"),
        ] where count > 0 {
          parts.append("\(name) \(count)")
        }
        if let error = report.stoppedBy { parts.append("stopped \(error.kind.rawValue)") }
        return parts.joined(separator: ", ")
      }
    }
  }

  @Test("event sequences", arguments: rows)
  func sequences(_ row: Row) throws {
    let unrouted = row.unroutedCollections
    var driver = Driver(
      pass: ReplayPass(
        concurrency: row.concurrency, maxWindow: row.maxWindow,
        routed: { !unrouted.contains($0.key.collection) }))
    #expect(driver.pass.start() == .read)
    for (index, (event, expected)) in row.steps.enumerated() {
      let got = try driver.apply(event)
      #expect(got == expected, "step \(index + 1): \(event)")
    }
  }
}
