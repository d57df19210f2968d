import CourierDomain
import CourierPorts
import Foundation
import Testing

/// What the store keeps of a record's JSON is what it was given, byte for byte (decision 2428):
/// a field nested to the parser's limit and integers beyond 64 bits, in the record, its
/// server copy, an outbox entry's payload and base copy and a conflict's server record, read
/// back and, for a store on disk, after reopening it.
@Suite("Exact JSON through the local store")
struct ExactJSONStoreTests {
  typealias F = Fixture

  /// A value `levels` arrays deep around a number no Double holds.
  static func deep(_ levels: Int) -> String {
    String(repeating: "[", count: levels) + "-1.5e-400" + String(repeating: "]", count: levels)
  }

  /// Fields whose object is nested exactly to the limit.
  static let fieldsText =
    #"{"big":18446744073709551617,"deep":\#(deep(JSONValue.maximumDepth - 1)),"#
    + #""fraction":0.10,"minus_zero":-0,"title":"T"}"#

  static let adapters: [StoreAdapter] = [.inMemory, .sqlite, .sqliteKept, .file]

  @Test("records, entries and conflicts keep every digit and level", arguments: adapters)
  func exact(adapter: StoreAdapter) throws {
    let fields = try JSONValue(parsing: Self.fieldsText)
    let record = ServerRecord(id: "a", payload: fields, version: 3, updatedAt: F.epoch)
    var edited = fields
    if case .object(var members) = edited {
      members["title"] = .string("T2")
      edited = .object(members)
    }
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var store = try adapter.open(directory.path)
    try store.applyServerList(
      [record], collection: F.collection, etag: "\"1\"", refreshedAt: F.epoch)
    let operation = OutboxOperation(
      key: F.key("a"), kind: .update, payload: edited, baseVersion: 3, enqueuedAt: F.epoch,
      basePayload: fields)
    try store.enqueue(operation)
    let conflicted = OutboxOperation(
      key: F.key("b"), kind: .update, payload: fields, baseVersion: 1, enqueuedAt: F.epoch)
    try store.enqueue(conflicted)
    try store.markConflicted(conflicted.id, serverRecord: RecordSchema.standard.json(for: record))

    // Compared as booleans: a failure prints which, not 20,000 brackets.
    func check(_ store: any LocalStore, _ when: String) throws {
      let stored = try #require(try store.record(F.key("a")), "\(when)")
      // The record as the list left it (enqueueing alone does not change it).
      let payload = stored.payload?.jsonText == Self.fieldsText
      #expect(payload, "\(when): the record's payload")
      let server = stored.server?.payload.jsonText == Self.fieldsText
      #expect(server, "\(when): the record's server copy")
      let entry = try #require(try store.entry(operation.id), "\(when)")
      let entryPayload = entry.operation.payload?.jsonText == edited.jsonText
      #expect(entryPayload, "\(when): the entry's payload")
      let base = entry.operation.basePayload?.jsonText == Self.fieldsText
      #expect(base, "\(when): the entry's base copy")
      let conflict = try #require(try store.entry(conflicted.id), "\(when)")
      guard case .conflicted(let current) = conflict.state else {
        Issue.record("\(when): not conflicted")
        return
      }
      #expect(current["big"]?.jsonText == "18446744073709551617", "\(when)")
      let deep = current["deep"]?.jsonText == Self.deep(JSONValue.maximumDepth - 1)
      #expect(deep, "\(when): the conflict's server record")
    }
    try check(store, "as written")
    if adapter.durable {
      adapter.close(store)
      store = try adapter.open(directory.path)
      try check(store, "reopened")
    }
    adapter.close(store)
  }
}
