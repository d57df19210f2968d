import CourierDomain
import Foundation
import Testing

@Suite("ReplayQueue")
struct ReplayQueueTests {
  enum Mark: Sendable { case pending, rejected, conflicted }

  /// Entry `n` of record `id`: operation id n, sequence n.
  static func entry(_ n: Int, _ id: String, _ mark: Mark = .pending) -> OutboxEntry {
    let state: OutboxEntryState =
      switch mark {
      case .pending: .pending
      case .rejected: .rejected(message: "no", code: "validation_failed")
      case .conflicted: .conflicted(serverRecord: .null)
      }
    return OutboxEntry(
      sequence: Int64(n),
      operation: OutboxOperation(
        id: uuid(n), key: RecordKey(collection: "articles", id: id), kind: .update,
        payload: .object([:]), baseVersion: 1, enqueuedAt: Date(timeIntervalSinceReferenceDate: 0)),
      state: state)
  }

  static func uuid(_ n: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", n)) ?? UUID()
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var entries: [OutboxEntry]
    /// Entries (by number) the replay keeps conflicted when they are sent.
    var keptConflicted: Set<Int> = []
    /// What is sent, in order, each with the numbers of the refused entries it supersedes.
    var expected: [Sent]
    var testDescription: String { name }
  }

  struct Sent: Sendable, Equatable {
    var n: Int
    var superseded: [Int] = []
  }

  static let rows: [Row] = [
    Row(name: "empty outbox → nothing", entries: [], expected: []),
    Row(
      name: "pending entries in queue order",
      entries: [entry(1, "a"), entry(2, "b"), entry(3, "a")],
      expected: [Sent(n: 1), Sent(n: 2), Sent(n: 3)]),
    Row(
      name: "behind a conflicted entry its record waits, others go on",
      entries: [entry(1, "a", .conflicted), entry(2, "a"), entry(3, "b")],
      expected: [Sent(n: 3)]),
    Row(
      name: "a conflicted entry holds only the entries after it",
      entries: [entry(1, "a"), entry(2, "a", .conflicted), entry(3, "a")],
      expected: [Sent(n: 1)]),
    Row(
      name: "a rejected entry is not sent; the next write of its record supersedes it",
      entries: [entry(1, "a", .rejected), entry(2, "b"), entry(3, "a")],
      expected: [Sent(n: 2), Sent(n: 3, superseded: [1])]),
    Row(
      name: "several refused entries are superseded together, once",
      entries: [entry(1, "a", .rejected), entry(2, "a", .rejected), entry(3, "a"), entry(4, "a")],
      expected: [Sent(n: 3, superseded: [1, 2]), Sent(n: 4)]),
    Row(
      name: "a refused entry after the last write of its record stays",
      entries: [entry(1, "a"), entry(2, "a", .rejected)], expected: [Sent(n: 1)]),
    Row(
      name: "an entry kept conflicted during the walk holds its record's later entries",
      entries: [entry(1, "a"), entry(2, "b"), entry(3, "a"), entry(4, "b")],
      keptConflicted: [1], expected: [Sent(n: 1), Sent(n: 2), Sent(n: 4)]),
    Row(
      name: "only rejected and conflicted entries → nothing to send",
      entries: [entry(1, "a", .rejected), entry(2, "b", .conflicted)], expected: []),
  ]

  @Test("walk table", arguments: rows)
  func walk(_ row: Row) {
    var queue = ReplayQueue(row.entries)
    var sent: [Sent] = []
    while let (entry, superseded) = queue.next() {
      let n = Int(entry.sequence)
      sent.append(Sent(n: n, superseded: superseded.map { id in Self.number(id, in: row.entries) }))
      if row.keptConflicted.contains(n) { queue.hold(entry.key) }
    }
    #expect(sent == row.expected)
  }

  static func number(_ id: UUID, in entries: [OutboxEntry]) -> Int {
    Int(entries.first { $0.id == id }?.sequence ?? -1)
  }
}
