import CourierDomain
import Foundation
import HTTPTypes
import Testing

/// Every rule of `DeliveryProof`, as tables: which replies prove that the intended server
/// applied a write or an upload, and which are a network answering in its place.
@Suite("DeliveryProof")
struct DeliveryProofTests {
  static let id = "6f1c2b9e-0d4a-4c8e-9a51-2f0b8c7d3e10"
  static let portal =
    "<!DOCTYPE html><html><body><h1>Please log in to the network</h1></body></html>"

  static func operation(_ kind: OutboxKind, base: Int? = nil) -> OutboxOperation {
    OutboxOperation(
      key: RecordKey(collection: "articles", id: id), kind: kind,
      payload: kind == .delete ? nil : .object(["title": .string("T"), "body": .string("")]),
      baseVersion: base, enqueuedAt: Date(timeIntervalSince1970: 0))
  }

  /// A reply: the response and its body's bytes.
  struct Reply: Sendable {
    var head: HTTPResponse
    var body: Data
  }

  static func reply(_ status: Int, _ body: String, type: String = "application/json") -> Reply {
    Reply(
      head: HTTPResponse(status: .init(code: status), headerFields: [.contentType: type]),
      body: Data(body.utf8))
  }

  static func classify(_ reply: Reply) -> CourierError? {
    ResponseClassifier.classify(reply.head, body: reply.body)
  }

  static func write(
    _ operation: OutboxOperation, _ reply: Reply, collection: CollectionDescription
  ) throws -> ServerRecord? {
    try DeliveryProof.write(
      operation, response: reply.head, body: reply.body, collection: collection)
  }

  static func record(id: String = id, version: Int = 1) -> String {
    #"{"id":"\#(id)","title":"T","body":"","version":\#(version),"updated_at":"2026-11-30T10:15:00.123Z"}"#
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let kind: OutboxKind
    let base: Int?
    let response: Reply
    /// nil when the reply proves delivery; the shortfall otherwise.
    let shortfall: DeliveryProof.Shortfall?
    /// A body that says it is JSON and does not parse: a bad reply, not a login page (2423).
    var badReply = false
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "create: 201 with the record", kind: .create, base: nil,
      response: reply(201, record()), shortfall: nil),
    Row(
      name: "create replayed: 200 with the record", kind: .create, base: nil,
      response: reply(200, record()), shortfall: nil),
    Row(
      name: "update: 200 with a newer version", kind: .update, base: 3,
      response: reply(200, record(version: 4)), shortfall: nil),
    Row(
      name: "update: the same version as the base", kind: .update, base: 3,
      response: reply(200, record(version: 3)), shortfall: .staleVersion),
    Row(
      name: "update: an older version than the base", kind: .update, base: 3,
      response: reply(200, record(version: 2)), shortfall: .staleVersion),
    Row(
      name: "captive portal: 200 text/html", kind: .create, base: nil,
      response: reply(200, portal, type: "text/html"), shortfall: .notJSON),
    Row(
      name: "empty 200, said to be JSON", kind: .create, base: nil, response: reply(200, ""),
      shortfall: nil, badReply: true),
    Row(
      name: "truncated record, said to be JSON", kind: .create, base: nil,
      response: reply(201, String(record().prefix(30))), shortfall: nil, badReply: true),
    Row(
      name: "truncated record, said to be problem+json", kind: .create, base: nil,
      response: reply(201, "{{", type: "application/problem+json; charset=utf-8"), shortfall: nil,
      badReply: true),
    Row(
      name: "truncated record, said to be text", kind: .create, base: nil,
      response: reply(201, String(record().prefix(30)), type: "text/plain"), shortfall: .notJSON),
    Row(
      name: "empty 200 of no type", kind: .create, base: nil,
      response: Reply(head: HTTPResponse(status: .ok), body: Data()), shortfall: .notJSON),
    Row(
      name: "2xx with other JSON", kind: .create, base: nil, response: reply(200, #"{"ok":true}"#),
      shortfall: .notRecord),
    Row(
      name: "2xx with a JSON list", kind: .update, base: 1, response: reply(200, "[]"),
      shortfall: .notRecord),
    Row(
      name: "record without a version", kind: .create, base: nil,
      response: reply(201, #"{"id":"\#(id)","title":"T"}"#), shortfall: .notRecord),
    Row(
      name: "another record's id", kind: .create, base: nil,
      response: reply(201, record(id: "someone-else")), shortfall: .otherRecord),
    Row(
      name: "202 accepted is not applied", kind: .create, base: nil,
      response: reply(202, record()), shortfall: .unexpectedStatus),
    Row(
      name: "204 to a create", kind: .create, base: nil, response: reply(204, ""),
      shortfall: .unexpectedStatus),
    Row(
      name: "delete: 204", kind: .delete, base: 2, response: reply(204, ""), shortfall: nil),
    Row(
      name: "delete: 200 with an empty body", kind: .delete, base: 2, response: reply(200, ""),
      shortfall: nil),
    Row(
      name: "delete: 200 login page", kind: .delete, base: 2,
      response: reply(200, portal, type: "text/html"), shortfall: .unexpectedBody),
    Row(
      name: "delete: 201", kind: .delete, base: 2, response: reply(201, ""),
      shortfall: .unexpectedStatus),
  ]

  @Test("a write's reply", arguments: rows)
  func write(_ row: Row) throws {
    let operation = Self.operation(row.kind, base: row.base)
    do {
      let server = try DeliveryProof.write(
        operation, response: row.response.head, body: row.response.body, schema: .standard)
      #expect(
        row.shortfall == nil && !row.badReply,
        "proved delivery, expected \(String(describing: row.shortfall))")
      if row.kind == .delete {
        #expect(server == nil)
      } else {
        #expect(server?.id == Self.id)
      }
    } catch let error as CourierError where row.badReply {
      // Something that speaks the API answered, badly: exit 76, the write kept pending.
      #expect(error.kind == .invalidResponse, "\(error)")
      #expect(error.code == "reply_bad_json")
      #expect(error.mayHaveReachedServer)
      #expect(error.userMessage == "The server sent a reply that couldn't be understood.")
    } catch let error as CourierError {
      #expect(error.kind == .notTheServer)
      #expect(error.isTransient)
      #expect(error.code == row.shortfall?.rawValue, "\(error)")
      #expect(error.status == row.response.head.status.code)
      #expect(!error.userMessage.contains("<"))
      #expect(error.userMessage.contains("not your server"))
    }
  }

  struct UploadRow: Sendable, CustomTestStringConvertible {
    let name: String
    let confirmation: DeliveryProof.UploadConfirmation
    let response: Reply
    let fileSize: Int64?
    let shortfall: DeliveryProof.Shortfall?
    var testDescription: String { name }
  }

  static let photo =
    #"{"id":"p1","url":"/photos/p1","title":"T","filename":"a.jpg","content_type":"image/jpeg","size":1234,"sha256":"00"}"#

  static let uploadRows: [UploadRow] = [
    UploadRow(
      name: "photo record, same size", confirmation: .record, response: reply(201, photo),
      fileSize: 1234, shortfall: nil),
    UploadRow(
      name: "photo record, numeric id", confirmation: .record,
      response: reply(201, #"{"id":7,"size":10}"#), fileSize: 10, shortfall: nil),
    UploadRow(
      name: "photo record, another size", confirmation: .record, response: reply(201, photo),
      fileSize: 99, shortfall: .notUploadRecord),
    UploadRow(
      name: "photo record without an id", confirmation: .record,
      response: reply(201, #"{"size":1234}"#), fileSize: 1234, shortfall: .notUploadRecord),
    UploadRow(
      name: "photo record with an empty id", confirmation: .record,
      response: reply(201, #"{"id":""}"#), fileSize: 1234, shortfall: .notUploadRecord),
    UploadRow(
      name: "a list where a record is due", confirmation: .record, response: reply(200, "[]"),
      fileSize: 1, shortfall: .notUploadRecord),
    UploadRow(
      name: "login page", confirmation: .record,
      response: reply(200, portal, type: "text/html"), fileSize: 1, shortfall: .notJSON),
    UploadRow(
      name: "login page to a custom target", confirmation: .json,
      response: reply(200, portal, type: "text/html"), fileSize: 1, shortfall: .notJSON),
    UploadRow(
      name: "echo list to a custom target", confirmation: .json,
      response: reply(200, #"[{"field":"title","value":"T"}]"#), fileSize: 1, shortfall: nil),
    UploadRow(
      name: "204 to a status-only target", confirmation: .status, response: reply(204, ""),
      fileSize: 1, shortfall: nil),
    UploadRow(
      name: "a 302 is never a success", confirmation: .status, response: reply(302, ""),
      fileSize: 1, shortfall: .unexpectedStatus),
  ]

  @Test("an upload's reply", arguments: uploadRows)
  func upload(_ row: UploadRow) throws {
    do {
      try DeliveryProof.upload(
        row.response.head, body: row.response.body, confirmation: row.confirmation,
        fileSize: row.fileSize)
      #expect(row.shortfall == nil, "accepted, expected \(String(describing: row.shortfall))")
    } catch let error as CourierError {
      #expect(error.kind == .notTheServer)
      #expect(error.code == row.shortfall?.rawValue, "\(error)")
    }
  }

  @Test("a declared collection: its schema reads the record, its statuses prove the write")
  func declaredCollection() throws {
    let notes = CollectionDescription(
      name: "notes", path: "/notes",
      schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
      fields: [], answers: ServerAnswers(writeStatuses: [201], deleteStatuses: [200]))
    let create = OutboxOperation(
      key: RecordKey(collection: "notes", id: "n1"), kind: .create,
      payload: .object(["text": .string("t")]), baseVersion: nil, enqueuedAt: Date())
    let note = #"{"note_id":"n1","text":"t","rev":1,"modified_at":"2026-11-30T10:15:00.123Z"}"#
    let record = try Self.write(create, Self.reply(201, note), collection: notes)
    #expect(
      record?.id == "n1" && record?.version == 1
        && record?.payload == .object(["text": .string("t")]))
    // The articles' names are not a note; a 200 is not what this server says to a create.
    let article = #expect(throws: CourierError.self) {
      try Self.write(create, Self.reply(201, Self.record(id: "n1")), collection: notes)
    }
    #expect(article?.code == DeliveryProof.Shortfall.notRecord.rawValue)
    let status = #expect(throws: CourierError.self) {
      try Self.write(create, Self.reply(200, note), collection: notes)
    }
    #expect(status?.code == DeliveryProof.Shortfall.unexpectedStatus.rawValue)
    var delete = create
    delete.kind = .delete
    delete.payload = nil
    #expect(
      try Self.write(delete, Self.reply(200, ""), collection: notes) == nil)
    let deleteStatus = #expect(throws: CourierError.self) {
      try Self.write(delete, Self.reply(202, ""), collection: notes)
    }
    #expect(deleteStatus?.code == DeliveryProof.Shortfall.unexpectedStatus.rawValue)
  }

  /// Decision 2401: an update answered `201 Created` with its record at a version not above its
  /// base was applied as a creation: the record had been deleted at the server.
  @Test("an update made anew (201, the record, an older version) is told apart, nothing else")
  func recreated() throws {
    let articles = CollectionDescription.articles
    func proof(_ kind: OutboxKind, base: Int?, _ reply: Reply) throws -> DeliveryProof.Proof {
      try DeliveryProof.proof(
        Self.operation(kind, base: base), response: reply.head, body: reply.body,
        collection: articles)
    }
    let made = try proof(.update, base: 3, Self.reply(201, Self.record(version: 1)))
    #expect(made == .recreated(try #require(try? proofRecord(Self.record(version: 1)))))
    // Based on version 1 and made anew at version 1: the same.
    #expect(
      try proof(.update, base: 1, Self.reply(201, Self.record(version: 1)))
        == .recreated(try #require(try? proofRecord(Self.record(version: 1)))))
    // A 200 at such a version proves nothing (decision 0414), nor another record or a page.
    for (reply, shortfall) in [
      (Self.reply(200, Self.record(version: 1)), DeliveryProof.Shortfall.staleVersion),
      (Self.reply(201, Self.record(id: "other", version: 1)), .otherRecord),
      (Self.reply(201, Self.portal, type: "text/html"), .notJSON),
    ] {
      let error = #expect(throws: CourierError.self) { try proof(.update, base: 3, reply) }
      #expect(error?.code == shortfall.rawValue)
    }
    // A create's 201 is an ordinary proof; a newer version is an ordinary update.
    #expect(
      try proof(.create, base: nil, Self.reply(201, Self.record(version: 1)))
        == .applied(try proofRecord(Self.record(version: 1))))
    #expect(
      try proof(.update, base: 3, Self.reply(201, Self.record(version: 4)))
        == .applied(try proofRecord(Self.record(version: 4))))
    // `write` (public) still refuses it as it did.
    let old = #expect(throws: CourierError.self) {
      try Self.write(
        Self.operation(.update, base: 3), Self.reply(201, Self.record(version: 1)),
        collection: articles)
    }
    #expect(old?.code == DeliveryProof.Shortfall.staleVersion.rawValue)
  }

  func proofRecord(_ text: String) throws -> ServerRecord {
    try RecordSchema.standard.serverRecord(from: try JSONValue(parsing: Data(text.utf8)))
  }

  @Test("a delete's 404 counts as applied only with the server's own error body")
  func deleteNotFound() {
    let server = Self.classify(
      Self.reply(404, #"{"code":"not_found","message":"No such article"}"#))
    let page = Self.classify(
      Self.reply(404, "<html><body>Not Found</body></html>", type: "text/html"))
    #expect(server.map(DeliveryProof.deleteAlreadyApplied) == true)
    #expect(page.map(DeliveryProof.deleteAlreadyApplied) == false)
  }

  @Test("a refusal is the server's only with its error body, or a 413")
  func serverRefusal() throws {
    let server = try #require(
      Self.classify(
        Self.reply(422, #"{"code":"validation_failed","message":"Title is empty"}"#)))
    let problem = try #require(
      Self.classify(
        Self.reply(
          404, #"{"type":"about:blank","title":"Not Found","detail":"No such thing"}"#,
          type: "application/problem+json")))
    let proxy = try #require(
      Self.classify(
        Self.reply(403, "<html><body>Forbidden by proxy</body></html>", type: "text/html")))
    let empty = try #require(Self.classify(Self.reply(404, "", type: "")))
    let tooLarge = try #require(Self.classify(Self.reply(413, "", type: "")))
    #expect(server.kind == .business)
    #expect(problem.kind == .business)
    #expect(tooLarge.kind == .business)
    for page in [proxy, empty] {
      #expect(page.kind == .notTheServer)
      #expect(page.code == DeliveryProof.Shortfall.refusalWithoutServerBody.rawValue)
      #expect(page.isTransient)
    }
    #expect(proxy.status == 403)
  }

  struct StatusRow: Sendable, CustomTestStringConvertible {
    let status: Int
    let code: String
    var testDescription: String { "\(status) → \(code)" }
  }

  @Test(
    "an unfollowed redirect, 407 and 511 are not the server",
    arguments: [
      StatusRow(status: 301, code: "redirected_elsewhere"),
      StatusRow(status: 302, code: "redirected_elsewhere"),
      StatusRow(status: 303, code: "redirected_elsewhere"),
      StatusRow(status: 307, code: "redirected_elsewhere"),
      StatusRow(status: 308, code: "redirected_elsewhere"),
      StatusRow(status: 407, code: "proxy_authentication_required"),
      StatusRow(status: 511, code: "network_login_required"),
    ])
  func notTheServerStatuses(_ row: StatusRow) throws {
    var response = Self.reply(row.status, Self.portal, type: "text/html")
    response.head.headerFields[.location] = "http://user:pw@portal.example/login?token=secret#x"
    let error = try #require(Self.classify(response))
    #expect(error.kind == .notTheServer)
    #expect(error.code == row.code)
    #expect(error.isTransient)
    #expect(!(error.underlying ?? "").contains("pw"))
    #expect(!(error.underlying ?? "").contains("secret"))
  }

  @Test(
    "which Content-Type says JSON",
    arguments: [
      ("application/json", true), ("Application/JSON; charset=utf-8", true),
      ("application/problem+json", true), ("text/json", true), ("text/html", false),
      ("text/plain", false), ("application/jsonp", false), ("", false),
    ])
  func saysJSON(_ type: String, _ json: Bool) {
    let error = DeliveryProof.unparseable(
      contentType: type.isEmpty ? nil : type, status: 200, bytes: 3, context: nil)
    #expect(error.kind == (json ? .invalidResponse : .notTheServer), "\(type)")
  }

  @Test("304 is still a success for a conditional request")
  func notModified() {
    #expect(Self.classify(Self.reply(304, "")) == nil)
  }
}
