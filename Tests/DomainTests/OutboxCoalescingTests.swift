import CourierDomain
import Foundation
import Testing

@Suite("OutboxCoalescing")
struct OutboxCoalescingTests {
  static let key = RecordKey(collection: "articles", id: "a")
  static let t0 = Date(timeIntervalSinceReferenceDate: 1_000)
  static let t1 = Date(timeIntervalSinceReferenceDate: 2_000)
  static let firstID = UUID(uuidString: "00000000-0000-4000-8000-000000000001") ?? UUID()
  static let laterID = UUID(uuidString: "00000000-0000-4000-8000-000000000002") ?? UUID()

  static func op(
    _ kind: OutboxKind, _ title: String?, base: Int?, later: Bool, key: RecordKey = key
  )
    -> OutboxOperation
  {
    OutboxOperation(
      id: later ? laterID : firstID, key: key, kind: kind,
      payload: title.map { .object(["title": .string($0)]) }, baseVersion: base,
      enqueuedAt: later ? t1 : t0)
  }

  struct Row: Sendable, CustomStringConvertible {
    var name: String
    var earlier: OutboxEntry
    var later: OutboxOperation
    var expected: OutboxCoalescing.Decision
    var description: String { name }
  }

  static func entry(
    _ operation: OutboxOperation, state: OutboxEntryState = .pending, attempts: Int = 0
  )
    -> OutboxEntry
  {
    OutboxEntry(sequence: 7, operation: operation, state: state, attempts: attempts)
  }

  static func merged(_ kind: OutboxKind, _ title: String?, base: Int?) -> OutboxCoalescing.Decision
  {
    .merge(
      OutboxOperation(
        id: laterID, key: key, kind: kind, payload: title.map { .object(["title": .string($0)]) },
        baseVersion: base, enqueuedAt: t0))
  }

  static let table: [Row] = [
    Row(
      name: "create + update → one create with the new payload",
      earlier: entry(op(.create, "A", base: nil, later: false)),
      later: op(.update, "B", base: nil, later: true), expected: merged(.create, "B", base: nil)),
    Row(
      name: "create + delete never sent → nothing",
      earlier: entry(op(.create, "A", base: nil, later: false)),
      later: op(.delete, nil, base: nil, later: true), expected: .dropBoth),
    Row(
      name: "update + update → one update with the first base version",
      earlier: entry(op(.update, "A", base: 3, later: false)),
      later: op(.update, "B", base: 4, later: true), expected: merged(.update, "B", base: 3)),
    Row(
      name: "update + delete → delete with the update's base version",
      earlier: entry(op(.update, "A", base: 3, later: false)),
      later: op(.delete, nil, base: 4, later: true), expected: merged(.delete, nil, base: 3)),
    Row(
      name: "delete + create → both kept",
      earlier: entry(op(.delete, nil, base: 3, later: false)),
      later: op(.create, "B", base: nil, later: true), expected: .append),
    Row(
      name: "delete + delete → both kept",
      earlier: entry(op(.delete, nil, base: 3, later: false)),
      later: op(.delete, nil, base: 3, later: true), expected: .append),
    Row(
      name: "create + create → both kept (the server answers already_exists)",
      earlier: entry(op(.create, "A", base: nil, later: false)),
      later: op(.create, "B", base: nil, later: true), expected: .append),
    Row(
      name: "update + create → both kept",
      earlier: entry(op(.update, "A", base: 1, later: false)),
      later: op(.create, "B", base: nil, later: true), expected: .append),
    Row(
      name: "an entry already attempted is never merged",
      earlier: entry(op(.update, "A", base: 3, later: false), attempts: 1),
      later: op(.update, "B", base: 3, later: true), expected: .append),
    Row(
      name: "a sent create is not cancelled by a delete",
      earlier: entry(op(.create, "A", base: nil, later: false), attempts: 2),
      later: op(.delete, nil, base: nil, later: true), expected: .append),
    Row(
      name: "a rejected entry is never merged",
      earlier: entry(
        op(.update, "A", base: 3, later: false), state: .rejected(message: "no", code: nil)),
      later: op(.update, "B", base: 3, later: true), expected: .append),
    Row(
      name: "a conflicted entry is never merged",
      earlier: entry(
        op(.update, "A", base: 3, later: false), state: .conflicted(serverRecord: .null)),
      later: op(.delete, nil, base: 3, later: true), expected: .append),
    Row(
      name: "another record is never merged",
      earlier: entry(op(.update, "A", base: 3, later: false)),
      later: op(
        .update, "B", base: 3, later: true, key: RecordKey(collection: "articles", id: "b")),
      expected: .append),
  ]

  @Test("the coalescing table", arguments: table)
  func decide(row: Row) {
    #expect(OutboxCoalescing.decide(earlier: row.earlier, later: row.later) == row.expected)
  }
}
