import CourierDomain
import Foundation
import Testing

/// Why each entry waits (`courier outbox`, decision 2401), from the outbox alone. Entries are
/// named as in `ReplayScheduleTests`: `a1` is record `a`'s first write, `:rejected`,
/// `:conflicted`, `:parked` its state.
@Suite("OutboxWait")
struct OutboxWaitTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var entries: [String]
    var attempts: [String: Int] = [:]
    /// Each entry's wait, as text.
    var waits: [String]
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(name: "an empty outbox", entries: [], waits: []),
    Row(
      name: "never sent: the next sync; sent before: again", entries: ["a1", "b1"],
      attempts: ["b1": 2], waits: ["next", "again 2"]),
    Row(
      name: "a record's later writes wait for its first", entries: ["a1", "b1", "a2", "a3"],
      waits: ["next", "next", "behind 1", "behind 1"]),
    Row(
      name: "a parked write holds its record's later writes, not the others'",
      entries: ["a1:parked", "b1", "a2"], waits: ["parked", "next", "held 1"]),
    Row(
      name: "a conflict holds its record's later writes",
      entries: ["a1:conflicted", "a2", "b1"], waits: ["conflict", "held 1", "next"]),
    Row(
      name: "a refused write holds nothing: a later write supersedes it",
      entries: ["a1:rejected", "a2"], waits: ["refused", "next"]),
  ]

  static func text(_ wait: OutboxWait) -> String {
    switch wait {
    case .next: "next"
    case .again(let attempts): "again \(attempts)"
    case .behind(let sequence): "behind \(sequence)"
    case .held(let sequence): "held \(sequence)"
    case .refused: "refused"
    case .conflict: "conflict"
    case .parked: "parked"
    case .path(let wait): "path \(wait.rawValue)"
    }
  }

  @Test("each entry's wait", arguments: rows)
  func waits(_ row: Row) {
    let entries = row.entries.enumerated().map { index, spec in
      var entry = ReplayScheduleTests.entry(spec, sequence: Int64(index + 1))
      let label = spec.split(separator: ":").first.map(String.init) ?? spec
      entry.attempts = row.attempts[label] ?? 0
      return entry
    }
    #expect(OutboxWait.of(entries).map(Self.text) == row.waits)
  }

  @Test("an entry the path policy holds says why; its record's later writes still wait for it")
  func heldByThePath() {
    let entries = ["a1", "b1", "a2"].enumerated().map { index, spec in
      ReplayScheduleTests.entry(spec, sequence: Int64(index + 1))
    }
    let waits = OutboxWait.of(entries) { $0.key.id == "a" ? .expensive : nil }
    #expect(waits.map(Self.text) == ["path expensive", "next", "behind 1"])
  }
}
