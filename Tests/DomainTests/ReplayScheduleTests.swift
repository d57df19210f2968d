import CourierDomain
import Foundation
import Testing

@Suite("ReplaySchedule")
struct ReplayScheduleTests {
  /// An entry from a spec: `a1` is record `a`'s first write (collection `articles`), `x:u1` a
  /// record of collection `x`, `:rejected`/`:conflicted` its state.
  static func entry(_ spec: String, sequence: Int64) -> OutboxEntry {
    var name = spec
    var state: OutboxEntryState = .pending
    if name.hasSuffix(":rejected") {
      name.removeLast(":rejected".count)
      state = .rejected(message: "no", code: "validation_failed")
    } else if name.hasSuffix(":conflicted") {
      name.removeLast(":conflicted".count)
      state = .conflicted(serverRecord: .null)
    } else if name.hasSuffix(":parked") {
      name.removeLast(":parked".count)
      state = .parked(reason: "unproven", code: "reply_stale_version")
    }
    let parts = name.split(separator: ":").map(String.init)
    let collection = parts.count == 2 ? parts[0] : "articles"
    let label = parts.last ?? name
    return OutboxEntry(
      sequence: sequence,
      operation: OutboxOperation(
        id: id(label), key: RecordKey(collection: collection, id: String(label.prefix(1))),
        kind: .update, payload: .object([:]), baseVersion: 1, enqueuedAt: Date()),
      state: state)
  }

  /// A stable operation id per label.
  static func id(_ label: String) -> UUID {
    let hex = label.utf8.map { String(format: "%02x", $0) }.joined()
    let padded = String((hex + String(repeating: "0", count: 12)).prefix(12))
    return UUID(uuidString: "00000000-0000-4000-8000-\(padded)") ?? UUID()
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var entries: [String]
    var sequential: Bool
    var limit: Int
    /// Each window's labels, `label<superseded` when it supersedes a refused one; the
    /// records of each window settle before the next.
    var windows: [[String]]
    var routedOut: Set<String> = []
    var unrouted = 0
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "distinct records, in order, a window at most `limit`", entries: ["a1", "b1", "c1"],
      sequential: true, limit: 2, windows: [["a1", "b1"], ["c1"]]),
    Row(
      name: "sequential: a window stops at a record already in it (global order)",
      entries: ["a1", "b1", "a2", "c1"], sequential: true, limit: 4,
      windows: [["a1", "b1"], ["a2", "c1"]]),
    Row(
      name: "concurrent: a record's later entry waits, the others go",
      entries: ["a1", "b1", "a2", "c1"], sequential: false, limit: 4,
      windows: [["a1", "b1", "c1"], ["a2"]]),
    Row(
      name: "concurrent: one entry per record per window, in queue order",
      entries: ["a1", "a2", "a3", "b1", "c1"], sequential: false, limit: 2,
      windows: [["a1", "b1"], ["a2", "c1"], ["a3"]]),
    Row(
      name: "a conflicted entry holds its record's later ones",
      entries: ["a1:conflicted", "a2", "b1"], sequential: true, limit: 4, windows: [["b1"]]),
    Row(
      name: "a newer write supersedes its record's refused entry",
      entries: ["a1:rejected", "a2", "b1"], sequential: true, limit: 4,
      windows: [["a2<a1", "b1"]]),
    Row(
      name: "a refused entry with nothing after it is left alone",
      entries: ["a1:rejected", "b1"], sequential: false, limit: 4, windows: [["b1"]]),
    Row(
      name: "a collection without a sender waits, with its record's later entries",
      entries: ["x:u1", "x:u2", "a1"], sequential: true, limit: 4, windows: [["a1"]],
      routedOut: ["x"], unrouted: 1),
    Row(
      name: "a window of one, as the first window of a pass",
      entries: ["a1", "b1"], sequential: true, limit: 1, windows: [["a1"], ["b1"]]),
  ]

  static func label(_ pick: ReplaySchedule.Pick, _ labels: [UUID: String]) -> String {
    let own = labels[pick.entry.id] ?? "?"
    let superseded = pick.superseded.map { labels[$0] ?? "?" }
    return superseded.isEmpty ? own : own + "<" + superseded.joined(separator: ",")
  }

  @Test("windows", arguments: rows)
  func windows(_ row: Row) {
    let entries = row.entries.enumerated().map { Self.entry($1, sequence: Int64($0 + 1)) }
    var labels: [UUID: String] = [:]
    for spec in row.entries {
      let label = spec.split(separator: ":").map(String.init).first { $0.count == 2 } ?? spec
      labels[Self.id(label)] = label
    }
    var schedule = ReplaySchedule(entries)
    var unrouted = 0
    var seen: [[String]] = []
    while true {
      let window = schedule.nextWindow(
        limit: row.limit, sequential: row.sequential,
        routed: { !row.routedOut.contains($0.key.collection) }, unrouted: &unrouted)
      if window.isEmpty { break }
      seen.append(window.map { Self.label($0, labels) })
      schedule.settle(window.map(\.entry.key))
    }
    #expect(seen == row.windows)
    #expect(unrouted == row.unrouted)
    #expect(schedule.isEmpty)
  }

  @Test("an unsettled record is not picked again; a settled one is, in its rebased version")
  func settleAndRebase() {
    let entries = ["a1", "a2", "a3", "b1"].enumerated().map {
      Self.entry($1, sequence: Int64($0 + 1))
    }
    var schedule = ReplaySchedule(entries)
    var unrouted = 0
    let first = schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted)
    #expect(first.map(\.entry.id) == [entries[0].id, entries[3].id])
    #expect(schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted).isEmpty)
    let server = ServerRecord(id: "a", payload: .string("A1"), version: 2)
    schedule.apply([
      OutboxRebase(key: entries[0].key, completed: 1, fromVersion: 1, server: server),
      // Another base version, and another record: neither moves a2 or a3.
      OutboxRebase(key: entries[0].key, completed: 1, fromVersion: 7, server: server),
      OutboxRebase(key: entries[3].key, completed: 4, fromVersion: 1, server: server),
    ])
    schedule.settle([entries[0].key])
    let second = schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted)
    #expect(second.map(\.entry.id) == [entries[1].id])
    #expect(second.first?.entry.operation.baseVersion == 2)
    #expect(second.first?.entry.operation.basePayload == .string("A1"))
    // A picked entry is not moved again: a3 moves with a2's completion, not a2 itself.
    let third = ServerRecord(id: "a", payload: .string("A2"), version: 3)
    schedule.apply([OutboxRebase(key: entries[0].key, completed: 2, fromVersion: 2, server: third)])
    schedule.settle([entries[0].key, entries[3].key])
    let last = schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted)
    #expect(last.map(\.entry.id) == [entries[2].id])
    #expect(last.first?.entry.operation.baseVersion == 3)
    #expect(last.first?.entry.operation.basePayload == .string("A2"))
    schedule.settle([entries[0].key])
    #expect(schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted).isEmpty)
    #expect(schedule.isEmpty)
  }

  @Test("a record held after its window (kept conflicted) sends nothing more")
  func hold() {
    let entries = ["a1", "a2", "b1", "b2"].enumerated().map {
      Self.entry($1, sequence: Int64($0 + 1))
    }
    var schedule = ReplaySchedule(entries)
    var unrouted = 0
    let first = schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted)
    #expect(first.count == 2)
    schedule.hold(entries[0].key)
    schedule.settle(first.map(\.entry.key))
    let second = schedule.nextWindow(limit: 8, sequential: false, unrouted: &unrouted)
    #expect(second.map(\.entry.id) == [entries[3].id])
  }
}
