import CourierLinux
import CourierSystem
import Foundation
import Testing

/// The declared collections' configuration (`collections`), beside the other keys' tests.
extension ConfigLoaderTests {
  @Test("collections: a declaration from the file, with the contract's defaults for the rest")
  func collections() throws {
    let notes = """
      {"collections": {"notes": {"id": "note_id", "version": "rev", "updated_at": "modified_at",
        "fields": {"text": "string", "tags": "strings"}, "required": ["text"], "version_tag": "r",
        "conflict_codes": ["stale"], "write_statuses": [201, 200]},
       "memos": {}}}
      """
    let config = try load(files: [Self.file: notes])
    #expect(config.collections.map(\.name) == ["memos", "notes"])
    let declared = try #require(config.collections.last)
    #expect(declared.path == "/notes")
    #expect(
      declared.schema
        == RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"))
    #expect(
      declared.fields == [
        RecordField("tags", .strings), RecordField("text", .string, required: true),
      ])
    #expect(declared.answers.versionTagPrefix == "r" && declared.answers.conflictCodes == ["stale"])
    #expect(
      declared.answers.writeStatuses == [200, 201] && declared.answers.goneCodes == ["not_found"])
    let memos = try #require(config.collections.first)
    #expect(memos == CollectionDescription(name: "memos"))
    #expect(try load().collections.isEmpty)
  }

  struct BadCollection: Sendable, CustomTestStringConvertible {
    var json: String
    var key: String
    var testDescription: String { "\(json) → \(key)" }
  }

  static let badCollections: [BadCollection] = [
    BadCollection(json: #"[]"#, key: "collections"),
    BadCollection(json: #"{"Notes": {}}"#, key: "collections.Notes"),
    BadCollection(json: #"{"articles": {}}"#, key: "collections.articles"),
    BadCollection(json: #"{"list": {}}"#, key: "collections.list"),
    BadCollection(json: #"{"uploads": {}}"#, key: "collections.uploads"),
    BadCollection(json: #"{"notes": 3}"#, key: "collections.notes"),
    BadCollection(json: #"{"notes": {"paht": "/n"}}"#, key: "collections.notes.paht"),
    BadCollection(json: #"{"notes": {"path": "notes"}}"#, key: "collections.notes.path"),
    BadCollection(json: #"{"notes": {"path": "/n?x=1"}}"#, key: "collections.notes.path"),
    BadCollection(json: #"{"notes": {"id": ""}}"#, key: "collections.notes.id"),
    BadCollection(json: #"{"notes": {"id": "rev", "version": "rev"}}"#, key: "collections.notes"),
    BadCollection(
      json: #"{"notes": {"fields": {"text": "text"}}}"#, key: "collections.notes.fields.text"),
    BadCollection(
      json: #"{"notes": {"fields": {"id": "string"}}}"#, key: "collections.notes.fields"),
    BadCollection(json: #"{"notes": {"required": ["text"]}}"#, key: "collections.notes.required"),
    BadCollection(
      json: #"{"notes": {"version_tag": "r\n"}}"#, key: "collections.notes.version_tag"),
    BadCollection(
      json: #"{"notes": {"write_statuses": [404]}}"#, key: "collections.notes.write_statuses"),
    BadCollection(
      json: #"{"notes": {"conflict_codes": "x"}}"#, key: "collections.notes.conflict_codes"),
    BadCollection(json: #"{"notes": {"lengths": []}}"#, key: "collections.notes.lengths"),
    BadCollection(
      json: #"{"notes": {"lengths": {"text": [1, 5]}}}"#, key: "collections.notes.lengths.text"),
    BadCollection(
      json: #"{"notes": {"fields": {"n": "integer"}, "lengths": {"n": [1, 5]}}}"#,
      key: "collections.notes.lengths.n"),
    BadCollection(
      json: #"{"notes": {"fields": {"t": "string"}, "lengths": {"t": [5, 1]}}}"#,
      key: "collections.notes.lengths.t"),
    BadCollection(
      json: #"{"notes": {"fields": {"t": "string"}, "lengths": {"t": [-1, 1]}}}"#,
      key: "collections.notes.lengths.t"),
    BadCollection(
      json: #"{"notes": {"fields": {"t": "string"}, "lengths": {"t": 5}}}"#,
      key: "collections.notes.lengths.t"),
    BadCollection(
      json: #"{"notes": {"attachments": "photo"}}"#, key: "collections.notes.attachments"),
    BadCollection(
      json: #"{"notes": {"attachments": ["id"]}}"#, key: "collections.notes.attachments"),
    BadCollection(
      json: #"{"notes": {"attachments": ["p", "p"]}}"#, key: "collections.notes.attachments"),
    BadCollection(
      json: #"{"notes": {"fields": {"t": "string"}, "attachments": ["p"]}}"#,
      key: "collections.notes.attachments"),
    BadCollection(
      json: #"{"notes": {"fields": {"p": "integer"}, "attachments": ["p"]}}"#,
      key: "collections.notes.attachments"),
    BadCollection(
      json: #"{"notes": {"offline_attachments": true}}"#,
      key: "collections.notes.offline_attachments"),
    BadCollection(
      json: #"{"notes": {"attachments": ["p"], "offline_attachments": "yes"}}"#,
      key: "collections.notes.offline_attachments"),
    BadCollection(
      json: #"{"articles": {"offline_attachments": 1}}"#,
      key: "collections.articles.offline_attachments"),
    BadCollection(
      json: #"{"articles": {"offline_attachments": true, "path": "/a"}}"#,
      key: "collections.articles"),
  ]

  @Test("collections: offline_attachments on a declared collection, and on the built-in articles")
  func offlineAttachments() throws {
    let config = try load(files: [
      Self.file:
        #"{"collections": {"articles": {"offline_attachments": true}, "memos": {"attachments": ["scan"], "offline_attachments": true}, "notes": {"attachments": ["p"]}}}"#
    ])
    #expect(config.offlineArticlePhotos)
    #expect(config.collections.map(\.name) == ["memos", "notes"])
    #expect(config.collections.map(\.offlineAttachments) == [true, false])
    #expect(try !load().offlineArticlePhotos)
  }

  @Test("collections: attachment fields, declared string fields or any when none are declared")
  func collectionAttachments() throws {
    let config = try load(files: [
      Self.file:
        #"{"collections": {"notes": {"fields": {"cover": "string", "t": "string"}, "attachments": ["cover"]}, "memos": {"attachments": ["scan"]}}}"#
    ])
    #expect(config.collections.map(\.attachments) == [["scan"], ["cover"]])
    #expect(CollectionDescription.articles.attachments == ["photo"])
    #expect(try load().collections.isEmpty)
  }

  @Test("collections: a string field's declared lengths")
  func collectionLengths() throws {
    let config = try load(files: [
      Self.file:
        #"{"collections": {"notes": {"fields": {"t": "string"}, "lengths": {"t": [0, 9]}}}}"#
    ])
    let field = try #require(config.collections.first?.field("t"))
    #expect(field.length == 0...9)
  }
}
