import CourierDomain
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("ReplayRequest")
struct ReplayRequestTests {
  static let id = UUID(uuidString: "6F1C2A4E-0000-4000-8000-00000000000A") ?? UUID()
  static let articles = CollectionDescription(name: "articles")

  static func operation(
    _ kind: OutboxKind, id: String = "a1", base: Int? = nil, payload: JSONValue? = nil
  ) -> OutboxOperation {
    OutboxOperation(
      id: Self.id, key: RecordKey(collection: "articles", id: id), kind: kind, payload: payload,
      baseVersion: base, enqueuedAt: Date(timeIntervalSinceReferenceDate: 0))
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var operation: OutboxOperation
    var collection = ReplayRequestTests.articles
    var method: HTTPRequest.Method
    var path: String
    var ifMatch: String?
    var key: String
    var contentType: String?
    var body: String?
    var testDescription: String { name }
  }

  static let payload: JSONValue = .object([
    "title": .string("a/b"), "body": .string("x"), "tags": .array([.integer(2), .integer(1)]),
  ])

  static let rows: [Row] = [
    Row(
      name: "create: PUT, no If-Match, key = operation id, sorted body",
      operation: operation(.create, payload: payload), method: .put, path: "/articles/a1",
      key: "6f1c2a4e-0000-4000-8000-00000000000a",
      contentType: "application/json; charset=utf-8",
      body: #"{"body":"x","tags":[2,1],"title":"a/b"}"#),
    Row(
      name: "update on v4: If-Match \"v4\", key carries .v4",
      operation: operation(.update, base: 4, payload: payload), method: .put,
      path: "/articles/a1", ifMatch: "\"v4\"", key: "6f1c2a4e-0000-4000-8000-00000000000a.v4",
      contentType: "application/json; charset=utf-8",
      body: #"{"body":"x","tags":[2,1],"title":"a/b"}"#),
    Row(
      name: "create re-based after a conflict on v9 (a create with a base)",
      operation: operation(.create, base: 9, payload: payload), method: .put,
      path: "/articles/a1", ifMatch: "\"v9\"", key: "6f1c2a4e-0000-4000-8000-00000000000a.v9",
      contentType: "application/json; charset=utf-8",
      body: #"{"body":"x","tags":[2,1],"title":"a/b"}"#),
    Row(
      name: "update without a payload sends an empty object",
      operation: operation(.update, base: 1), method: .put, path: "/articles/a1",
      ifMatch: "\"v1\"", key: "6f1c2a4e-0000-4000-8000-00000000000a.v1",
      contentType: "application/json; charset=utf-8", body: "{}"),
    Row(
      name: "delete on v2: DELETE, If-Match, no body, no Content-Type",
      operation: operation(.delete, base: 2), method: .delete, path: "/articles/a1",
      ifMatch: "\"v2\"", key: "6f1c2a4e-0000-4000-8000-00000000000a.v2"),
    Row(
      name: "an id with a space and a question mark is percent-encoded",
      operation: operation(.delete, id: "a b?c", base: 2), method: .delete,
      path: "/articles/a%20b%3Fc", ifMatch: "\"v2\"",
      key: "6f1c2a4e-0000-4000-8000-00000000000a.v2"),
    Row(
      name: "another collection's path",
      operation: operation(.delete, base: 2),
      collection: CollectionDescription(name: "notes", path: "/api/v2/notes"), method: .delete,
      path: "/api/v2/notes/a1", ifMatch: "\"v2\"",
      key: "6f1c2a4e-0000-4000-8000-00000000000a.v2"),
    Row(
      name: "a collection declaring its own version tag: If-Match \"r2\"",
      operation: operation(.delete, base: 2),
      collection: CollectionDescription(
        name: "notes", path: "/notes",
        schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
        fields: [], answers: ServerAnswers(versionTagPrefix: "r")),
      method: .delete, path: "/notes/a1", ifMatch: "\"r2\"",
      key: "6f1c2a4e-0000-4000-8000-00000000000a.v2"),
  ]

  @Test("request table", arguments: rows)
  func request(_ row: Row) throws {
    let request = ReplayRequest(row.operation, collection: row.collection)
    #expect(request.method == row.method)
    #expect(request.path == row.path)
    #expect(request.headerFields[.ifMatch] == row.ifMatch)
    #expect(request.headerFields[.idempotencyKey] == row.key)
    #expect(request.headerFields[.contentType] == row.contentType)
    let body = try request.body().map { String(decoding: $0, as: UTF8.self) }
    #expect(body == row.body)
  }

  @Test("the same payload gives the same bytes whatever the insertion order")
  func canonicalBytes() throws {
    var members: [String: JSONValue] = [:]
    for letter in "zyxwvutsrqponmlkjihgfedcba" { members[String(letter)] = .integer(1) }
    let one = ReplayRequest(
      Self.operation(.create, payload: .object(members)), collection: Self.articles)
    let reversed = Dictionary(uniqueKeysWithValues: members.reversed())
    let two = ReplayRequest(
      Self.operation(.create, payload: .object(reversed)), collection: Self.articles)
    let bytes = try one.body()
    #expect(bytes == (try two.body()))
    #expect(bytes.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix(#"{"a":1,"b":1"#) == true)
  }

  @Test("CollectionDescription's path defaults to /<name>")
  func defaultPath() {
    #expect(CollectionDescription(name: "notes").path == "/notes")
  }

  /// Random payloads of what a collection's fields hold: keys of lowercase letters and `_` (and
  /// a few others, which take the encoder's path), strings of every kind of character.
  static func payload(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
    let keys = ["title", "body", "text", "tags", "a_b", "z", "Title", "a1", "é"]
    switch random.below(depth > 2 ? 4 : 6) {
    case 0: return .string(JSONValueParserTests.randomString(&random))
    case 1: return .integer(Int64(bitPattern: random.next()))
    case 2: return random.below(2) == 0 ? .bool(true) : .null
    case 3: return random.below(8) == 0 ? .number(0.5) : .string("plain")
    case 4:
      return .array((0..<random.below(4)).map { _ in payload(&random, depth: depth + 1) })
    default:
      var members: [String: JSONValue] = [:]
      for _ in 0..<random.below(5) {
        members[keys[random.below(keys.count)]] = payload(&random, depth: depth + 1)
      }
      return .object(members)
    }
  }

  @Test("the body's bytes are JSONEncoder's, whichever writer makes them (2,000 payloads)")
  func bodyBytesAreTheEncoders() throws {
    var random = SplitMix64(testSeed: 20_261_202)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    for _ in 0..<2_000 {
      let fields = Self.payload(&random)
      let request = ReplayRequest(
        Self.operation(.create, payload: fields), collection: Self.articles)
      let body = try #require(try request.body())
      #expect(
        body == (try encoder.encode(fields)),
        "\(random.seedDescription): \(String(decoding: body, as: UTF8.self))")
    }
  }

  @Test("a payload the encoder would round or cannot walk is sent as its own text, every digit")
  func exactBody() throws {
    let deep =
      String(repeating: "[", count: JSONValue.maximumDepth - 1) + "1e400"
      + String(repeating: "]", count: JSONValue.maximumDepth - 1)
    for text in [
      #"{"big":18446744073709551617,"title":"T"}"#, #"{"n":-0,"title":"T"}"#,
      #"{"n":0.10,"title":"T"}"#, #"{"deep":\#(deep),"title":"T"}"#,
      #"{"Key":"é\n","big":-99999999999999999999999,"n":1.5}"#,
    ] {
      let payload = try JSONValue(parsing: text)
      let request = ReplayRequest(
        Self.operation(.update, base: 2, payload: payload), collection: Self.articles)
      let body = try #require(try request.body())
      let exact = String(decoding: body, as: UTF8.self) == text
      #expect(exact, "\(text.prefix(60))")
    }
    // What the encoder writes exactly stays the encoder's bytes (a replay after an upgrade).
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let plain: JSONValue = .object(["n": .double(0.1), "Key": .integer(-5), "t": .string("a/b")])
    let request = ReplayRequest(Self.operation(.update, payload: plain), collection: Self.articles)
    #expect(try request.body() == (try encoder.encode(plain)))
  }
}
