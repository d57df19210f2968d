import CourierDomain
import Foundation
import Testing

@Suite("LocalStorePlan.rebase")
struct LocalStorePlanRebaseTests {
  static let key = RecordKey(collection: "articles", id: "a")
  static let edited = Date(timeIntervalSinceReferenceDate: 0)

  static func fields(_ pairs: [String: String]) -> JSONValue {
    .object(pairs.mapValues { .string($0) })
  }

  static func entry(
    _ sequence: Int64, _ kind: OutboxKind, _ payload: [String: String]?, base: Int?,
    state: OutboxEntryState = .pending
  ) -> OutboxEntry {
    OutboxEntry(
      sequence: sequence,
      operation: OutboxOperation(
        key: key, kind: kind, payload: payload.map { fields($0) }, baseVersion: base,
        enqueuedAt: edited),
      state: state, attempts: sequence == 1 ? 1 : 0)
  }

  static let base = ServerRecord(id: "a", payload: fields(["title": "T", "body": "B"]), version: 3)
  static let current = ServerRecord(
    id: "a", payload: fields(["title": "T", "body": "B3"]), version: 7)
  static let merged = fields(["title": "T2", "body": "B3"])

  @Test("the entry carries the merged fields on the new version, pending; the record shows them")
  func alone() {
    let conflicted = Self.entry(
      1, .update, ["title": "T2", "body": "B"], base: 3,
      state: .conflicted(serverRecord: .null))
    let record = LocalRecord(
      key: Self.key, payload: Self.fields(["title": "T2", "body": "B"]), state: .modified,
      server: Self.base)
    let plan = LocalStorePlan.rebase(
      conflicted, payload: Self.merged, onto: Self.current, record: record,
      entries: [conflicted])
    #expect(plan.result.operation.payload == Self.merged)
    #expect(plan.result.operation.baseVersion == 7)
    #expect(plan.result.operation.basePayload == Self.current.payload, "the new base copy")
    #expect(plan.result.state == .pending)
    #expect(
      plan.result.sequence == 1 && plan.result.attempts == 1 && plan.result.id == conflicted.id)
    #expect(
      plan.mutations == [
        .replaceEntry(plan.result),
        .putRecord(
          LocalRecord(key: Self.key, payload: Self.merged, state: .modified, server: Self.current)),
      ])
  }

  @Test("a later edit keeps its own change, takes the server's side, and is rebased")
  func laterEntries() {
    let first = Self.entry(1, .update, ["title": "T2", "body": "B"], base: 3)
    let later = Self.entry(2, .update, ["title": "T2", "body": "B", "mood": "ok"], base: 3)
    let laterDelete = Self.entry(3, .delete, nil, base: 5)
    let record = LocalRecord(key: Self.key, payload: nil, state: .deleted, server: Self.base)
    let plan = LocalStorePlan.rebase(
      first, payload: Self.merged, onto: Self.current, record: record,
      entries: [first, later, laterDelete])
    var expectedLater = later
    expectedLater.operation.baseVersion = 7
    expectedLater.operation.basePayload = Self.current.payload
    expectedLater.operation.payload = Self.fields(["title": "T2", "body": "B3", "mood": "ok"])
    #expect(plan.mutations.contains(.replaceEntry(expectedLater)))
    // Based on another version, and without fields: left as it is.
    #expect(
      !plan.mutations.contains {
        $0 == .replaceEntry(laterDelete) || $0 == .deleteEntry(sequence: 3)
      })
    // The record stays deleted (its last write), with the new server copy.
    #expect(
      plan.mutations.last
        == .putRecord(
          LocalRecord(key: Self.key, payload: nil, state: .deleted, server: Self.current)))
  }
}
