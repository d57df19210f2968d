import CourierDomain
import Foundation
import Testing

@Suite("RecordSchema")
struct RecordSchemaTests {
  @Test("the backend's article JSON reads into a record and back")
  func roundTrip() throws {
    let json: JSONValue = .object([
      "id": .string("x"), "title": .string("T"), "body": .string("B"), "version": .number(3),
      "updated_at": .string("2026-11-30T10:15:00.123Z"),
    ])
    let record = try RecordSchema.standard.serverRecord(from: json)
    #expect(record.id == "x" && record.version == 3)
    #expect(record.payload == .object(["title": .string("T"), "body": .string("B")]))
    #expect(RecordSchema.standard.json(for: record) == json)
    let article = try Article(server: record)
    #expect(article.title == "T" && article.body == "B" && article.version == 3)
  }

  @Test(
    "a record without a usable id, version or timestamp names the field",
    arguments: [
      (JSONValue.object(["version": .number(1)]), "id"),
      (JSONValue.object(["id": .string("x")]), "version"),
      (JSONValue.object(["id": .string("x"), "version": .number(1.5)]), "version"),
      (
        JSONValue.object([
          "id": .string("x"), "version": .number(1), "updated_at": .string("yesterday"),
        ]), "updated_at"
      ),
    ])
  func missing(json: JSONValue, field: String) {
    #expect {
      try RecordSchema.standard.serverRecord(from: json)
    } throws: { error in
      (error as? CourierError)?.field == field && (error as? CourierError)?.kind == .decoding
    }
  }

  @Test("a user's own record type with other member names")
  func customSchema() throws {
    let schema = RecordSchema(idKey: "uuid", versionKey: "rev", updatedAtKey: "modified")
    let record = try schema.serverRecord(
      from: .object(["uuid": .string("u"), "rev": .number(9), "note": .string("n")]))
    #expect(record.id == "u" && record.version == 9 && record.updatedAt == nil)
    #expect(record.payload == .object(["note": .string("n")]))
  }
}
