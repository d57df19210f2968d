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

  @Test("a parked entry is written as a pending one with a `parked` member (decision 2401)")
  func parkedCodable() throws {
    var parked = Self.entry(basePayload: nil)
    parked.state = .parked(reason: "Its reply never proved it.", code: "reply_stale_version")
    parked.attempts = 3
    let data = try JSONEncoder().encode(parked)
    #expect(try JSONDecoder().decode(OutboxEntry.self, from: data) == parked)
    // What a Courier from before parking reads: the state as pending, the rest ignored.
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect((object["state"] as? [String: Any])?.keys.first == "pending")
    #expect((object["parked"] as? [String: Any])?["code"] as? String == "reply_stale_version")
    // An entry written before parking existed decodes as it was.
    var pending = parked
    pending.state = .pending
    let before = try JSONEncoder().encode(pending)
    #expect(!String(decoding: before, as: UTF8.self).contains("parked"))
    #expect(try JSONDecoder().decode(OutboxEntry.self, from: before) == pending)
  }
}
