import CourierDomain
import CourierSystem
import Foundation
import Testing

@Suite("ReplayDecision")
struct ReplayDecisionTests {
  static let editedAt = Date(timeIntervalSinceReferenceDate: 10_000)
  static let key = RecordKey(collection: "articles", id: "a")

  static func entry(_ kind: OutboxKind, base: Int? = 3) -> OutboxEntry {
    OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        id: UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID(), key: key,
        kind: kind, payload: kind == .delete ? nil : .object(["title": .string("mine")]),
        baseVersion: base, enqueuedAt: editedAt),
      attempts: 1)
  }

  /// The server's `current`, updated `offset` seconds after the local edit.
  static func current(version: Int = 7, offset: TimeInterval) -> JSONValue {
    .object([
      "id": .string("a"), "version": .integer(Int64(version)), "title": .string("theirs"),
      "updated_at": .string(RFC3339.string(from: editedAt.addingTimeInterval(offset))),
    ])
  }

  static func record(version: Int = 7, offset: TimeInterval) -> ServerRecord {
    ServerRecord(
      id: "a", payload: .object(["title": .string("theirs")]), version: version,
      updatedAt: editedAt.addingTimeInterval(offset))
  }

  static func conflict(_ current: JSONValue?, code: String? = "version_conflict")
    -> CourierError
  {
    CourierError(
      .conflict, status: 409, code: code, serverMessage: "stale", current: current)
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var policy: ConflictPolicy = .lastWriteWins
    var kind: OutboxKind = .update
    var answer: ReplayAnswer
    var resends = 0
    var expected: ReplayStep
    var testDescription: String { name }
  }

  static let delivered = ServerRecord(
    id: "a", payload: .object(["title": .string("mine")]), version: 4)
  static let notFound = CourierError(
    .business, status: 404, code: "not_found", serverMessage: "No such article.")
  static let portal404 = CourierError(
    .notTheServer, status: 404, code: "refusal_without_server_body")
  static let invalid = CourierError(
    .business, status: 422, code: "validation_failed", serverMessage: "Title is empty.")
  static let noMessage = CourierError(.business, status: 422, code: "validation_failed")
  static let offline = CourierError(.offline)
  static let overloaded = CourierError(.overloaded, status: 503)
  static let expired = CourierError(.unauthorized, status: 401)
  static let portal = CourierError(.notTheServer, status: 200, code: "reply_not_json")
  static let cancelled = CourierError(.cancelled)
  static let store = CourierError(.localStore, code: "io")

  static let rows: [Row] = [
    Row(
      name: "create proved → complete with the server's record", kind: .create,
      answer: .delivered(delivered), expected: .complete(serverRecord: delivered)),
    Row(
      name: "update proved → complete with the server's record",
      answer: .delivered(delivered), expected: .complete(serverRecord: delivered)),
    Row(
      name: "delete proved → complete without a record", kind: .delete,
      answer: .delivered(nil), expected: .complete(serverRecord: nil)),
    Row(
      name: "delete meets the server's 404 → already applied, complete", kind: .delete,
      answer: .failed(notFound), expected: .complete(serverRecord: nil)),
    Row(
      name: "delete meets a portal's 404 → stop, keep it", kind: .delete,
      answer: .failed(portal404), expected: .stop(portal404)),
    Row(
      name: "update meets the server's 404 → the record is gone: LWW sends it as a create",
      answer: .failed(notFound), expected: .recreate),
    Row(
      name: "422 → rejected with the server's message",
      answer: .failed(invalid),
      expected: .reject(message: "Title is empty.", code: "validation_failed")),
    Row(
      name: "422 without a message → rejected with the user message",
      answer: .failed(noMessage),
      expected: .reject(message: noMessage.userMessage, code: "validation_failed")),
    Row(name: "offline → stop", answer: .failed(offline), expected: .stop(offline)),
    Row(name: "503 after retries → stop", answer: .failed(overloaded), expected: .stop(overloaded)),
    Row(name: "401 → stop", answer: .failed(expired), expected: .stop(expired)),
    Row(name: "a login page's 200 → stop", answer: .failed(portal), expected: .stop(portal)),
    Row(name: "cancelled → stop", answer: .failed(cancelled), expected: .stop(cancelled)),
    Row(name: "local store failure → stop", answer: .failed(store), expected: .stop(store)),
    Row(
      name: "409 without version_conflict nor current → rejected",
      answer: .failed(conflict(nil, code: "duplicate")),
      expected: .reject(message: "stale", code: "duplicate")),
    Row(
      name: "409 with current but another code → still a conflict",
      answer: .failed(conflict(current(offset: -5), code: "other")),
      expected: .resend(baseVersion: 7, adopting: record(offset: -5))),
    Row(
      name: "LWW, local newer → re-send on the server's version, adopt it",
      answer: .failed(conflict(current(offset: -5))),
      expected: .resend(baseVersion: 7, adopting: record(offset: -5))),
    Row(
      name: "LWW, server newer → take the server's",
      answer: .failed(conflict(current(offset: 5))), expected: .takeServer(record(offset: 5))),
    Row(
      name: "LWW, re-send bound reached → keep it conflicted",
      answer: .failed(conflict(current(offset: -5))), resends: 3,
      expected: .keepConflict(current: current(offset: -5), adopting: record(offset: -5))),
    Row(
      name: "LWW, under the bound → re-send", answer: .failed(conflict(current(offset: -5))),
      resends: 2, expected: .resend(baseVersion: 7, adopting: record(offset: -5))),
    Row(
      name: "LWW, delete, local newer → re-send the delete", kind: .delete,
      answer: .failed(conflict(current(offset: -5))),
      expected: .resend(baseVersion: 7, adopting: record(offset: -5))),
    Row(
      name: "serverWins → take the server's", policy: .serverWins,
      answer: .failed(conflict(current(offset: -5))), expected: .takeServer(record(offset: -5))),
    Row(
      name: "manual → keep conflicted with current", policy: .manual,
      answer: .failed(conflict(current(offset: -5))),
      expected: .keepConflict(current: current(offset: -5), adopting: record(offset: -5))),
    Row(
      name: "version_conflict without current → the record is gone: LWW sends it as a create",
      answer: .failed(conflict(nil)), expected: .recreate),
    Row(
      name: "a create's version_conflict without current → keep conflicted with null",
      kind: .create, answer: .failed(conflict(nil)),
      expected: .keepConflict(current: .null, adopting: nil)),
    Row(
      name: "unreadable current → keep conflicted with it, adopt nothing",
      answer: .failed(conflict(.object(["title": .string("x")]))),
      expected: .keepConflict(current: .object(["title": .string("x")]), adopting: nil)),
  ]

  @Test("decision table", arguments: rows)
  func decision(_ row: Row) {
    let decision = ReplayDecision(policy: row.policy, maxResends: 3)
    let step = decision.step(for: Self.entry(row.kind), answer: row.answer, resends: row.resends)
    #expect(step == row.expected)
  }

  struct AnswersRow: Sendable, CustomTestStringConvertible {
    var name: String
    var kind: OutboxKind = .update
    var error: CourierError
    var expected: ReplayStep
    var testDescription: String { name }
  }

  /// A collection whose server says `stale_rev` for a conflict and `gone` for a missing record.
  static let declared = CollectionDescription(
    name: "notes", path: "/notes",
    schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
    fields: [], answers: ServerAnswers(conflictCodes: ["stale_rev"], goneCodes: ["gone"]))

  static let contractNotFound = CourierError(.business, status: 404, code: "not_found")

  static let answersRows: [AnswersRow] = [
    AnswersRow(
      name: "the declared conflict code with current → a conflict for the policy (manual)",
      error: CourierError(
        .conflict, status: 409, code: "stale_rev",
        current: .object(["note_id": .string("a"), "rev": .integer(7)])),
      expected: .keepConflict(
        current: .object(["note_id": .string("a"), "rev": .integer(7)]),
        adopting: ServerRecord(id: "a", payload: .object([:]), version: 7))),
    AnswersRow(
      name: "the contract's code is not this collection's, and without current → rejected",
      error: CourierError(
        .conflict, status: 409, code: "version_conflict", serverMessage: "no"),
      expected: .reject(message: "no", code: "version_conflict")),
    AnswersRow(
      name: "the declared conflict code without current → gone, kept for the user (manual)",
      error: CourierError(.conflict, status: 409, code: "stale_rev"),
      expected: .keepGone(adopting: nil)),
    AnswersRow(
      name: "an update meets the declared gone code → gone, kept for the user (manual)",
      error: CourierError(.business, status: 404, code: "gone"), expected: .keepGone(adopting: nil)),
    AnswersRow(
      name: "a delete meets the declared gone code → already applied", kind: .delete,
      error: CourierError(.business, status: 404, code: "gone"),
      expected: .complete(serverRecord: nil)),
    AnswersRow(
      name: "a delete meets the contract's not_found, not this server's word → rejected",
      kind: .delete, error: contractNotFound,
      expected: .reject(message: contractNotFound.userMessage, code: "not_found")),
  ]

  @Test(
    "a declared collection's answers decide what is a conflict and what is gone",
    arguments: answersRows)
  func declaredAnswers(_ row: AnswersRow) {
    let decision = ReplayDecision(policy: .manual, collection: Self.declared)
    #expect(decision.step(for: Self.entry(row.kind), answer: .failed(row.error)) == row.expected)
  }
}

@Suite("ReplayDecision, merge policy")
struct ReplayDecisionMergeTests {
  static let editedAt = Date(timeIntervalSinceReferenceDate: 10_000)

  static func fields(_ pairs: [String: String]) -> JSONValue {
    .object(pairs.mapValues { .string($0) })
  }

  /// The server's record: version 7, updated `offset` seconds after the local edit.
  static func server(_ pairs: [String: String], offset: TimeInterval = 5) -> ServerRecord {
    ServerRecord(
      id: "a", payload: fields(pairs), version: 7, updatedAt: editedAt.addingTimeInterval(offset))
  }

  static let baseFields = ["title": "T", "body": "B"]
  /// The base copy: version 3, the entry's base version.
  static let base = ServerRecord(id: "a", payload: fields(baseFields), version: 3)

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var kind: OutboxKind = .update
    var mine: [String: String]? = ["title": "T2", "body": "B"]
    var base: ServerRecord? = ReplayDecisionMergeTests.base
    /// The operation's own base copy (`basePayload`); nil for an entry written before it.
    var exact: [String: String]?
    var server: ServerRecord?
    var resends = 0
    var resolver: FieldResolver?
    var expected: ReplayStep
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "title here, body there → both, sent on the server's version",
      server: server(["title": "T", "body": "B3"]),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B3"]),
        onto: server(["title": "T", "body": "B3"]))),
    Row(
      name: "a field a newer server added is kept",
      server: server(["title": "T", "body": "B", "tags": "x"]),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B", "tags": "x"]),
        onto: server(["title": "T", "body": "B", "tags": "x"]))),
    Row(
      name: "both changed the title, server newer → the server's title (LWW per field)",
      server: server(["title": "S", "body": "B"], offset: 5),
      expected: .resendMerged(
        payload: fields(["title": "S", "body": "B"]), onto: server(["title": "S", "body": "B"]))),
    Row(
      name: "both changed the title, local newer → the user's title",
      server: server(["title": "S", "body": "B"], offset: -5),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B"]),
        onto: server(["title": "S", "body": "B"], offset: -5))),
    Row(
      name: "a resolver supplied by the user settles both-changed fields",
      server: server(["title": "S", "body": "B"], offset: -5),
      resolver: { field, _, _, _ in .string("resolved \(field)") },
      expected: .resendMerged(
        payload: fields(["title": "resolved title", "body": "B"]),
        onto: server(["title": "S", "body": "B"], offset: -5))),
    Row(
      name: "the server copy is of another version: merged without a base",
      base: ServerRecord(id: "a", payload: fields(["title": "T2", "body": "B"]), version: 2),
      server: server(["title": "T", "body": "B3"], offset: 5),
      expected: .resendMerged(
        payload: fields(["title": "T", "body": "B3"]),
        onto: server(["title": "T", "body": "B3"], offset: 5))),
    Row(
      name: "no server copy, local newer: without a base every difference goes to LWW",
      base: nil, server: server(["title": "T", "body": "B3"], offset: -5),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B"]),
        onto: server(["title": "T", "body": "B3"], offset: -5))),
    Row(
      name: "delete here, record unchanged there → the delete is sent on the new version",
      kind: .delete, mine: nil, server: server(baseFields),
      expected: .resend(baseVersion: 7, adopting: server(baseFields))),
    Row(
      name: "delete here, record changed there → kept conflicted", kind: .delete, mine: nil,
      server: server(["title": "T", "body": "B3"]),
      expected: .keepConflict(
        current: ReplayDecisionMergeTests.json(server(["title": "T", "body": "B3"])),
        adopting: server(["title": "T", "body": "B3"]))),
    Row(
      name: "re-send bound reached → kept conflicted",
      server: server(["title": "T", "body": "B3"]),
      resends: 3,
      expected: .keepConflict(
        current: ReplayDecisionMergeTests.json(server(["title": "T", "body": "B3"])),
        adopting: server(["title": "T", "body": "B3"]))),
    Row(
      name: "no current: the record is gone (decision 2401) → kept for the user", server: nil,
      expected: .keepGone(adopting: nil)),
    Row(
      name: "exact base copy, the record's copy replaced by a refresh: the server's body is kept",
      base: ServerRecord(id: "a", payload: fields(["title": "T", "body": "B5"]), version: 5),
      exact: baseFields, server: server(["title": "T", "body": "B3"], offset: 5),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B3"]),
        onto: server(["title": "T", "body": "B3"], offset: 5))),
    Row(
      name: "exact base copy wins over a record copy of the same version",
      base: ServerRecord(id: "a", payload: fields(["title": "X", "body": "Y"]), version: 3),
      exact: baseFields, server: server(["title": "T", "body": "B3"], offset: 5),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B3"]),
        onto: server(["title": "T", "body": "B3"], offset: 5))),
    Row(
      name: "exact base copy, no record copy at all: still a three-way merge",
      base: nil, exact: baseFields, server: server(["title": "T", "body": "B3"], offset: 5),
      expected: .resendMerged(
        payload: fields(["title": "T2", "body": "B3"]),
        onto: server(["title": "T", "body": "B3"], offset: 5))),
    Row(
      name: "exact base copy: a field the user removed stays removed, one the server added stays",
      mine: ["title": "T"], base: nil, exact: baseFields,
      server: server(["title": "T", "body": "B", "tags": "x"]),
      expected: .resendMerged(
        payload: fields(["title": "T", "tags": "x"]),
        onto: server(["title": "T", "body": "B", "tags": "x"]))),
    Row(
      name: "exact base copy of a delete, record unchanged there → the delete is re-sent",
      kind: .delete, mine: nil, base: nil, exact: baseFields, server: server(baseFields),
      expected: .resend(baseVersion: 7, adopting: server(baseFields))),
    Row(
      name: "exact base copy of a delete, record changed there → kept conflicted",
      kind: .delete, mine: nil, base: nil, exact: baseFields,
      server: server(["title": "T", "body": "B3"]),
      expected: .keepConflict(
        current: ReplayDecisionMergeTests.json(server(["title": "T", "body": "B3"])),
        adopting: server(["title": "T", "body": "B3"]))),
  ]

  static func json(_ record: ServerRecord) -> JSONValue { RecordSchema.standard.json(for: record) }

  @Test("merge table", arguments: rows)
  func decision(_ row: Row) {
    let entry = OutboxEntry(
      sequence: 1,
      operation: OutboxOperation(
        key: RecordKey(collection: "articles", id: "a"), kind: row.kind,
        payload: row.mine.map { Self.fields($0) }, baseVersion: 3, enqueuedAt: Self.editedAt,
        basePayload: row.exact.map { Self.fields($0) }),
      attempts: 1)
    let error = CourierError(
      .conflict, status: 409, code: "version_conflict", serverMessage: "stale",
      current: row.server.map { Self.json($0) })
    let decision = ReplayDecision(policy: .merge, maxResends: 3, resolver: row.resolver)
    let step = decision.step(
      for: entry, answer: .failed(error), resends: row.resends, base: row.base)
    #expect(step == row.expected)
  }

  @Test("the merge policy does not change how non-conflicts are settled")
  func nonConflicts() {
    let entry = ReplayDecisionTests.entry(.update)
    let decision = ReplayDecision(policy: .merge)
    #expect(
      decision.step(for: entry, answer: .delivered(ReplayDecisionTests.delivered))
        == .complete(serverRecord: ReplayDecisionTests.delivered))
    #expect(
      decision.step(for: entry, answer: .failed(ReplayDecisionTests.invalid))
        == .reject(message: "Title is empty.", code: "validation_failed"))
    #expect(
      decision.step(for: entry, answer: .failed(ReplayDecisionTests.offline))
        == .stop(ReplayDecisionTests.offline))
  }
}
