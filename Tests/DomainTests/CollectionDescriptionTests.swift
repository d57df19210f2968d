import CourierDomain
import Foundation
import Testing

@Suite("CollectionDescription")
struct CollectionDescriptionTests {
  static let notes = CollectionDescription(
    name: "notes", path: nil,
    schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
    fields: [RecordField("text", .string, required: true), RecordField("tags", .strings)],
    answers: ServerAnswers(versionTagPrefix: "r"))

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var collection: CollectionDescription = CollectionDescriptionTests.notes
    var payload: JSONValue
    /// The field the refusal names; nil when the payload fits.
    var refused: String??
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "all fields", payload: .object(["text": .string("t"), "tags": .array([])]),
      refused: .none),
    Row(
      name: "an optional field left out", payload: .object(["text": .string("t")]), refused: .none),
    Row(
      name: "the required field missing", payload: .object(["tags": .array([])]), refused: "text"),
    Row(name: "the required field null", payload: .object(["text": .null]), refused: "text"),
    Row(name: "a field of another kind", payload: .object(["text": .integer(1)]), refused: "text"),
    Row(
      name: "a field the declaration lacks",
      payload: .object(["text": .string("t"), "title": .string("x")]), refused: "title"),
    Row(
      name: "the server's own member (the version)",
      payload: .object(["text": .string("t"), "rev": .integer(2)]), refused: "rev"),
    Row(name: "not an object", payload: .array([]), refused: .some(nil)),
    Row(
      name: "open fields take anything but the server's members",
      collection: CollectionDescription(name: "open"),
      payload: .object(["anything": .array([.integer(1)])]), refused: .none),
    Row(
      name: "open fields still refuse the id member",
      collection: CollectionDescription(name: "open"),
      payload: .object(["id": .string("x")]), refused: "id"),
    Row(
      name: "articles: a title and a body", collection: .articles,
      payload: .object(["title": .string("t"), "body": .string("")]), refused: .none),
    Row(
      name: "articles: no title", collection: .articles, payload: .object(["body": .string("b")]),
      refused: "title"),
    // The contract's title: 1 to 200 characters, checked before queueing (decision 2427).
    Row(
      name: "articles: an empty title", collection: .articles,
      payload: .object(["title": .string(""), "body": .string("b")]), refused: "title"),
    Row(
      name: "articles: a title of spaces", collection: .articles,
      payload: .object(["title": .string(" \t ")]), refused: "title"),
    Row(
      name: "articles: a title of 200 characters", collection: .articles,
      payload: .object(["title": .string(String(repeating: "é", count: 200))]), refused: .none),
    Row(
      name: "articles: a title of 201 characters", collection: .articles,
      payload: .object(["title": .string(String(repeating: "é", count: 201))]), refused: "title"),
    Row(
      name: "articles: 200 scalars that are fewer characters", collection: .articles,
      payload: .object(["title": .string(String(repeating: "e\u{301}", count: 100))]),
      refused: .none),
    Row(
      name: "a declared length: at least 2", collection: lengths,
      payload: .object(["code": .string("x")]), refused: "code"),
    Row(
      name: "a declared length: within", collection: lengths,
      payload: .object(["code": .string("xyz")]), refused: .none),
  ]

  /// A collection whose one string field holds 2 to 3 characters.
  static let lengths = CollectionDescription(
    name: "codes", path: nil, schema: .standard,
    fields: [RecordField("code", length: 2...3)], answers: .contract)

  @Test("a record's fields checked against the declaration", arguments: rows)
  func validate(_ row: Row) throws {
    switch row.refused {
    case .none:
      #expect(throws: Never.self) { try row.collection.validate(row.payload) }
    case .some(let field):
      let error = #expect(throws: CourierError.self) { try row.collection.validate(row.payload) }
      #expect(error?.kind == .invalidInput && error?.field == field)
      #expect(error?.userMessage.isEmpty == false)
      #expect(error?.code == "invalid_record")
    }
  }

  @Test("the declared path, or /<name>; articles are one declaration")
  func defaults() {
    #expect(Self.notes.path == "/notes")
    #expect(Article.declaration == .articles)
    #expect(CollectionDescription.articles.schema == .standard)
    #expect(CollectionDescription.articles.field("title")?.required == true)
    #expect(CollectionDescription(name: "x", path: "/y/z").path == "/y/z")
  }
}
