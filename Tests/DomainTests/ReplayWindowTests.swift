import CourierDomain
import Testing

@Suite("ReplayWindow")
struct ReplayWindowTests {
  /// One event: `start`, or an answer `index=step` (`done`, `refused`, `kept`, `offline`,
  /// `resend`, `merged`, `theirs`; against a deletion `recreate`, `takegone`, `deleteagain`,
  /// `keepgone`; `park`), with `!` when the task is cancelled by then.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var count: Int
    var concurrency: Int
    /// Each event with the indices it lets leave (`-` for none).
    var steps: [(String, String)]
    /// The halt at the end: `-`, `reread`, `probe`, or the stop's error kind.
    var halt: String
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "one at a time, in order, to the end", count: 3, concurrency: 1,
      steps: [("start", "0"), ("0=done", "1"), ("1=refused", "2"), ("2=kept", "-")], halt: "-"),
    Row(
      name: "one at a time: nothing leaves after a stop", count: 3, concurrency: 1,
      steps: [("start", "0"), ("0=done", "1"), ("1=offline", "-")], halt: "offline"),
    Row(
      name: "one at a time: nothing leaves after a step that changes the queue", count: 3,
      concurrency: 1, steps: [("start", "0"), ("0=resend", "-")], halt: "reread"),
    Row(
      name: "at once: up to the limit, the next as each answers", count: 5, concurrency: 2,
      steps: [
        ("start", "0 1"), ("1=done", "2"), ("0=done", "3"), ("2=done", "4"), ("3=done", "-"),
        ("4=done", "-"),
      ], halt: "-"),
    Row(
      name: "at once: no new send after a halt; those out finish; the first halt stays",
      count: 5, concurrency: 3,
      steps: [("start", "0 1 2"), ("1=theirs", "-"), ("0=offline", "-"), ("2=done", "-")],
      halt: "reread"),
    Row(
      name: "an edit against a deletion settled by a new write, or the record dropped: reread",
      count: 3, concurrency: 1, steps: [("start", "0"), ("0=recreate", "-")], halt: "reread"),
    Row(
      name: "the server's deletion taken: reread", count: 2, concurrency: 1,
      steps: [("start", "0"), ("0=takegone", "-")], halt: "reread"),
    Row(
      name: "a re-creation deleted again: reread", count: 2, concurrency: 1,
      steps: [("start", "0"), ("0=deleteagain", "-")], halt: "reread"),
    Row(
      name: "an edit against a deletion kept for the user: the window goes on", count: 2,
      concurrency: 1, steps: [("start", "0"), ("0=keepgone", "1"), ("1=done", "-")], halt: "-"),
    Row(
      name: "an entry to park: nothing more leaves until the pass has probed", count: 3,
      concurrency: 1, steps: [("start", "0"), ("0=done", "1"), ("1=park", "-")], halt: "probe"),
    Row(
      name: "at once: those out when an entry is to be parked finish", count: 4, concurrency: 2,
      steps: [("start", "0 1"), ("0=park", "-"), ("1=done", "-")], halt: "probe"),
    Row(
      name: "cancelled before the first send: nothing leaves", count: 2, concurrency: 1,
      steps: [("start!", "-")], halt: "cancelled"),
    Row(
      name: "cancelled during a window: nothing more leaves", count: 4, concurrency: 2,
      steps: [("start", "0 1"), ("0=done!", "-"), ("1=merged", "-")], halt: "cancelled"),
  ]

  static func step(_ name: Substring) -> ReplayStep {
    let server = ServerRecord(id: "a", payload: .object([:]), version: 2)
    switch name {
    case "done": return .complete(serverRecord: server)
    case "refused": return .reject(message: "no", code: nil)
    case "kept": return .keepConflict(current: .null, adopting: nil)
    case "resend": return .resend(baseVersion: 2, adopting: server)
    case "merged": return .resendMerged(payload: .object([:]), onto: server)
    case "theirs": return .takeServer(server)
    case "recreate": return .recreate
    case "takegone": return .takeGone
    case "deleteagain": return .deleteAgain(server)
    case "keepgone": return .keepGone(adopting: nil)
    case "park": return .park(CourierError(.notTheServer, code: "reply_stale_version"))
    default: return .stop(CourierError(.offline))
    }
  }

  @Test("which entries leave, and when the window halts", arguments: rows)
  func sends(_ row: Row) throws {
    var window = ReplayWindow(count: row.count, concurrency: row.concurrency)
    for (event, expected) in row.steps {
      let cancelled = event.hasSuffix("!")
      let text = cancelled ? event.dropLast() : Substring(event)
      let leaving: [Int]
      if text == "start" {
        leaving = window.start(cancelled: cancelled)
      } else {
        let parts = text.split(separator: "=")
        let index = try #require(Int(parts[0]))
        leaving = window.answered(index, step: Self.step(parts[1]), cancelled: cancelled)
      }
      let got = leaving.isEmpty ? "-" : leaving.map(String.init).joined(separator: " ")
      #expect(got == expected, "\(event)")
    }
    let halt: String =
      switch window.halt {
      case nil: "-"
      case .reread?: "reread"
      case .probe?: "probe"
      case .stop(let error)?: error.kind.rawValue
      }
    #expect(halt == row.halt)
    #expect(window.isDone)
  }
}
