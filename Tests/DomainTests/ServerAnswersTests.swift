import CourierDomain
import Foundation
import Testing

@Suite("ServerAnswers")
struct ServerAnswersTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var answers: ServerAnswers = .contract
    var error: CourierError
    var conflict: Bool
    var gone: Bool
    var testDescription: String { name }
  }

  static let current: JSONValue = .object(["id": .string("a"), "version": .integer(2)])
  static let custom = ServerAnswers(conflictCodes: ["stale"], goneCodes: ["gone"])

  static let rows: [Row] = [
    Row(
      name: "409 version_conflict with current",
      error: CourierError(.conflict, status: 409, code: "version_conflict", current: current),
      conflict: true, gone: false),
    Row(
      name: "409 version_conflict without current",
      error: CourierError(.conflict, status: 409, code: "version_conflict"), conflict: true,
      gone: false),
    Row(
      name: "409 of another code with current (already_exists)",
      error: CourierError(.conflict, status: 409, code: "already_exists", current: current),
      conflict: true, gone: false),
    Row(
      name: "409 of another code without current",
      error: CourierError(.conflict, status: 409, code: "duplicate"), conflict: false, gone: false),
    Row(
      name: "a conflict without a code but with current",
      error: CourierError(.conflict, status: 409, current: current), conflict: true, gone: false),
    Row(
      name: "a business refusal is never a conflict",
      error: CourierError(.business, status: 422, code: "version_conflict"), conflict: false,
      gone: false),
    Row(
      name: "the server's 404 not_found",
      error: CourierError(.business, status: 404, code: "not_found"),
      conflict: false, gone: true),
    Row(
      name: "a 404 without the server's code",
      error: CourierError(.notTheServer, status: 404, code: "refusal_without_server_body"),
      conflict: false, gone: false),
    Row(
      name: "declared codes: stale is a conflict", answers: custom,
      error: CourierError(.conflict, status: 409, code: "stale"), conflict: true, gone: false),
    Row(
      name: "declared codes: version_conflict without current is not", answers: custom,
      error: CourierError(.conflict, status: 409, code: "version_conflict"), conflict: false,
      gone: false),
    Row(
      name: "declared codes: gone", answers: custom,
      error: CourierError(.business, status: 404, code: "gone"), conflict: false, gone: true),
    Row(
      name: "declared codes: not_found is not", answers: custom,
      error: CourierError(.business, status: 404, code: "not_found"), conflict: false, gone: false),
  ]

  @Test("what a refusal means, as the answers say", arguments: rows)
  func meaning(_ row: Row) {
    #expect(row.answers.isConflict(row.error) == row.conflict)
    #expect(row.answers.isAlreadyGone(row.error) == row.gone)
  }

  @Test("the entity tag of a version carries the declared prefix")
  func tags() {
    #expect(ServerAnswers.contract.tag(forVersion: 3) == "\"v3\"")
    #expect(ServerAnswers(versionTagPrefix: "r").tag(forVersion: 12) == "\"r12\"")
    #expect(ServerAnswers(versionTagPrefix: "").tag(forVersion: 1) == "\"1\"")
  }
}
