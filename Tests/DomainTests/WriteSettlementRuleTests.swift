import CourierDomain
import Foundation
import Testing

/// Decision 2401's rule as one table: what the replay does with a write whose reply says its
/// record is gone, or proves nothing, under each conflict policy. No clock, no transport, no
/// store: `ReplayDecision` alone.
@Suite("ReplayDecision, the rule of decision 2401")
struct WriteSettlementRuleTests {
  static let key = RecordKey(collection: "articles", id: "a")
  /// The record the server made anew from an edit (its `PUT` creates a missing record).
  static let remade = ServerRecord(
    id: "a", payload: .object(["title": .string("mine")]), version: 1)

  static func entry(_ kind: OutboxKind, attempts: Int) -> OutboxEntry {
    OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: key, kind: kind, payload: kind == .delete ? nil : .object(["title": .string("mine")]),
        baseVersion: kind == .create ? nil : 3, enqueuedAt: Date(timeIntervalSince1970: 0)),
      attempts: attempts)
  }

  /// The answers, by name.
  static func answer(_ name: String) -> ReplayAnswer {
    switch name {
    case "201 older": return .recreated(remade)
    case "404": return .failed(CourierError(.business, status: 404, code: "not_found"))
    case "410": return .failed(CourierError(.business, status: 410, code: "gone"))
    case "409 no current":
      return .failed(CourierError(.conflict, status: 409, code: "version_conflict"))
    case "409 current null":
      return .failed(CourierError(.conflict, status: 409, code: "version_conflict", current: .null))
    case "page":
      return .failed(CourierError(.notTheServer, status: 200, code: "reply_not_json"))
    case "200 older":
      return .failed(CourierError(.notTheServer, status: 200, code: "reply_stale_version"))
    case "bad reply": return .failed(CourierError(.invalidResponse))
    case "offline": return .failed(CourierError(.offline))
    case "401": return .failed(CourierError(.unauthorized, status: 401))
    default: return .failed(CourierError(.unexpected))
    }
  }

  /// A step, as the table names it.
  static func name(_ step: ReplayStep) -> String {
    switch step {
    case .complete(let record): record == nil ? "complete" : "complete \(record?.version ?? 0)"
    case .resend: "resend"
    case .resendMerged: "merge"
    case .takeServer: "takeServer"
    case .keepConflict(let current, let adopting):
      "keepConflict\(current == .null ? " null" : "")\(adopting == nil ? "" : " adopting")"
    case .reject: "reject"
    case .stop: "stop"
    case .recreate: "recreate"
    case .takeGone: "takeGone"
    case .deleteAgain(let record): "deleteAgain \(record.version)"
    case .keepGone(let adopting):
      adopting == nil ? "keepGone" : "keepGone \(adopting?.version ?? 0)"
    case .park: "park"
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var kind: OutboxKind
    var answer: String
    var attempts = 1
    /// lastWriteWins, serverWins, manual, merge.
    var steps: [String]
    var testDescription: String { "\(kind.rawValue), \(answer), attempt \(attempts)" }
  }

  static let rows: [Row] = [
    // An edit against a deletion: a conflict of its own kind, settled by the policy.
    Row(
      kind: .update, answer: "201 older",
      steps: ["complete 1", "deleteAgain 1", "keepGone 1", "keepGone 1"]),
    Row(kind: .update, answer: "404", steps: ["recreate", "takeGone", "keepGone", "keepGone"]),
    Row(kind: .update, answer: "410", steps: ["recreate", "takeGone", "keepGone", "keepGone"]),
    Row(
      kind: .update, answer: "409 no current",
      steps: ["recreate", "takeGone", "keepGone", "keepGone"]),
    Row(
      kind: .update, answer: "409 current null",
      steps: ["recreate", "takeGone", "keepGone", "keepGone"]),
    // A delete against a deletion: both sides want it gone.
    Row(kind: .delete, answer: "404", steps: Array(repeating: "complete", count: 4)),
    Row(kind: .delete, answer: "410", steps: Array(repeating: "complete", count: 4)),
    Row(kind: .delete, answer: "409 no current", steps: Array(repeating: "complete", count: 4)),
    // A create has no base: nothing of it was deleted. As before decision 2401.
    Row(
      kind: .create, answer: "409 no current",
      steps: Array(repeating: "keepConflict null", count: 4)),
    Row(kind: .create, answer: "404", steps: Array(repeating: "reject", count: 4)),
    // A reply that proves nothing: stop (the entry stays pending, decision 0414) until its
    // bound; then park (once the server answers a probe, `ReplayPass`).
    Row(kind: .update, answer: "page", attempts: 1, steps: Array(repeating: "stop", count: 4)),
    Row(kind: .update, answer: "page", attempts: 2, steps: Array(repeating: "stop", count: 4)),
    Row(kind: .update, answer: "page", attempts: 3, steps: Array(repeating: "park", count: 4)),
    Row(
      kind: .update, answer: "200 older", attempts: 2, steps: Array(repeating: "stop", count: 4)),
    Row(
      kind: .update, answer: "200 older", attempts: 3, steps: Array(repeating: "park", count: 4)),
    Row(kind: .create, answer: "page", attempts: 7, steps: Array(repeating: "park", count: 4)),
    Row(kind: .delete, answer: "page", attempts: 3, steps: Array(repeating: "park", count: 4)),
    Row(
      kind: .update, answer: "bad reply", attempts: 3, steps: Array(repeating: "park", count: 4)),
    // The network or the session, never the write: never parked, whatever the attempts.
    Row(kind: .update, answer: "offline", attempts: 9, steps: Array(repeating: "stop", count: 4)),
    Row(kind: .update, answer: "401", attempts: 9, steps: Array(repeating: "stop", count: 4)),
  ]

  @Test("the rule", arguments: rows)
  func rule(_ row: Row) {
    let policies: [ConflictPolicy] = [.lastWriteWins, .serverWins, .manual, .merge]
    let got = policies.map { policy in
      Self.name(
        ReplayDecision(policy: policy).step(
          for: Self.entry(row.kind, attempts: row.attempts), answer: Self.answer(row.answer)))
    }
    #expect(got == row.steps)
  }
}
