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
}
