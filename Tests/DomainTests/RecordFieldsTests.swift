import CourierDomain
import Foundation
import Testing

@Suite("RecordFields")
struct RecordFieldsTests {
  static let key = RecordKey(collection: "articles", id: "a1")
  static let server = ServerRecord(
    id: "a1", payload: .object(["title": .string("S")]), version: 7,
    updatedAt: Date(timeIntervalSinceReferenceDate: 1_000))

  @Test(
    "taken from a record read whole",
    arguments: [
      (
        LocalRecord(
          key: key, payload: .object(["title": .string("T"), "body": .integer(3)]),
          state: .modified, server: server),
        RecordFields(
          id: "a1", state: .modified, isDeleted: false, version: 7,
          updatedAt: Date(timeIntervalSinceReferenceDate: 1_000), values: ["T", nil])
      ),
      (
        LocalRecord(key: key, payload: nil, state: .deleted, server: server),
        RecordFields(
          id: "a1", state: .deleted, isDeleted: true, version: 7,
          updatedAt: Date(timeIntervalSinceReferenceDate: 1_000), values: [nil, nil])
      ),
      (
        LocalRecord(
          key: key, payload: .object(["body": .string("B")]), state: .created, server: nil),
        RecordFields(
          id: "a1", state: .created, isDeleted: false, version: nil, updatedAt: nil,
          values: [nil, "B"])
      ),
    ] as [(LocalRecord, RecordFields)])
  func fromRecord(record: LocalRecord, expected: RecordFields) {
    #expect(RecordFields(record, names: ["title", "body"]) == expected)
  }
}
