import CourierDomain
import Foundation
import Testing

@Suite("OutboxEntry")
struct OutboxEntryTests {
  static func entry(basePayload: JSONValue?) -> OutboxEntry {
    OutboxEntry(
      sequence: 3,
      operation: OutboxOperation(
        key: RecordKey(collection: "notes", id: "n"), kind: .update,
        payload: .object(["text": .string("mine")]), baseVersion: 2,
        enqueuedAt: Date(timeIntervalSinceReferenceDate: 1_000),
        basePayload: basePayload))
  }

  @Test(
    "a key path from another module to its id reads the id (a Swift 6.3.1 miscompile past 168 bytes)"
  )
  func idKeyPath() {
    let entries = [
      Self.entry(basePayload: .object(["text": .string("base")])), Self.entry(basePayload: nil),
    ]
    #expect(entries.map(\.id) == entries.map { $0.operation.id })
    #expect(MemoryLayout<OutboxEntry>.size <= 168, "past 168 bytes, entries.map(\\.id) is damaged")
  }

  @Test("the base copy round-trips through Codable, and an operation without it decodes")
  func codable() throws {
    let entry = Self.entry(basePayload: .object(["text": .string("base")]))
    let data = try JSONEncoder().encode(entry)
    #expect(try JSONDecoder().decode(OutboxEntry.self, from: data) == entry)
    #expect(String(decoding: data, as: UTF8.self).contains("basePayload"))
    let bare = Self.entry(basePayload: nil)
    let old = try JSONEncoder().encode(bare)
    #expect(!String(decoding: old, as: UTF8.self).contains("basePayload"))
    #expect(try JSONDecoder().decode(OutboxEntry.self, from: old) == bare)
    #expect(entry != bare, "the base copy takes part in equality")
  }

  /// `OutboxEntryState` as Courier declared it before parking, coded as Swift synthesizes it:
  /// what an older Courier reads a file journal with.
  enum StateBefore: Codable, Equatable {
    case pending
    case rejected(message: String, code: String?)
    case conflicted(serverRecord: JSONValue)
  }

  @Test("a parked entry is written as a pending one carrying its reason (decision 2401)")
  func parkedCodable() throws {
    var parked = Self.entry(basePayload: nil)
    parked.state = .parked(reason: "Its reply never proved it.", code: "reply_stale_version")
    parked.attempts = 3
    let data = try JSONEncoder().encode(parked)
    #expect(try JSONDecoder().decode(OutboxEntry.self, from: data) == parked)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let state = try #require(object["state"] as? [String: Any])
    #expect(Array(state.keys) == ["pending"])
    let carried = (state["pending"] as? [String: Any])?["parked"] as? [String: Any]
    #expect(carried?["code"] as? String == "reply_stale_version")
    // An older Courier reads it as pending (and sends it again under its key).
    let stateData = try JSONEncoder().encode(parked.state)
    #expect(try JSONDecoder().decode(StateBefore.self, from: stateData) == .pending)
    // The other states are coded as before, both ways.
    let before: [(StateBefore, OutboxEntryState)] = [
      (.pending, .pending),
      (
        .rejected(message: "No.", code: "validation_failed"),
        .rejected(message: "No.", code: "validation_failed")
      ),
      (.rejected(message: "No.", code: nil), .rejected(message: "No.", code: nil)),
      (.conflicted(serverRecord: .null), .conflicted(serverRecord: .null)),
      (
        .conflicted(serverRecord: .object(["version": .integer(3)])),
        .conflicted(serverRecord: .object(["version": .integer(3)]))
      ),
    ]
    for (old, new) in before {
      #expect(
        try JSONDecoder().decode(OutboxEntryState.self, from: JSONEncoder().encode(old)) == new)
      #expect(try JSONDecoder().decode(StateBefore.self, from: JSONEncoder().encode(new)) == old)
    }
  }
}
