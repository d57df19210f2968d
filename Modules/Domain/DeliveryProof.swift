import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Decides whether a reply proves that the intended server applied a write (decision 0414).
///
/// A network that answers is not the server: a Wi-Fi login page answers `200 text/html`, a
/// proxy or a portal answers `302` to another site. So a write leaves the outbox, and an upload
/// is reported as done, only on a reply that could not have come from anything else: the
/// status the contract gives for the operation, a body that parses as the expected record, the
/// same id, a version. Anything else is `notTheServer`: transient, the entry stays pending with
/// its Idempotency-Key, and a person is told that the network answered, not their server.
///
/// Pure: every rule is a table test (`DeliveryProofTests`).
package enum DeliveryProof {
  /// Why a reply did not prove delivery; the `code` of the `notTheServer` error.
  package enum Shortfall: String, Sendable, CaseIterable {
    /// The status is not one the contract gives for this operation (a 200 for a delete with a
    /// body, a 202, a 1xx).
    case unexpectedStatus = "reply_unexpected_status"
    /// The body is not JSON and does not say it is (an HTML login page). A body that says it
    /// is JSON and does not parse is a bad reply instead (`DeliveryProof.unparseable`).
    case notJSON = "reply_not_json"
    /// The body is JSON but not the collection's record (no id or no version).
    case notRecord = "reply_not_record"
    /// The body is a record, but of another id than the one written.
    case otherRecord = "reply_other_record"
    /// The record's version is not newer than the version the write was based on.
    case staleVersion = "reply_stale_version"
    /// A delete's reply carried a body where the contract gives none.
    case unexpectedBody = "reply_unexpected_body"
    /// An upload's reply did not describe the stored file (no id, or another size).
    case notUploadRecord = "reply_not_upload_record"
    /// A refusal (4xx) without the API's error body: a proxy or a portal refused, not the
    /// server (`ResponseClassifier` gives it this code).
    case refusalWithoutServerBody = "refusal_without_server_body"
  }

  /// What an upload's reply must show for the upload to count as done: the stored record,
  /// any JSON body, or any 2xx.
  package enum UploadConfirmation: Sendable, Equatable {
    /// The stored record: a JSON object with a non-empty `id`, and when it says `size`, the
    /// size of the file part that was sent (the reference backend's `/photos`).
    case record
    /// Any JSON body (a custom target that echoes what it parsed, like `/upload`).
    case json
    /// Any 2xx, with or without a body (a target known to answer `204`).
    case status
  }

  /// Checks the 2xx reply to a replayed write (`PUT` for a create or an update, `DELETE`).
  /// - Parameters:
  ///   - operation: the operation that was sent.
  ///   - response: the reply; its status is 2xx (the client turned every other into an error).
  ///   - body: the reply's body.
  ///   - attempts: how many attempts the call made (1 without retries), for the error.
  ///   - schema: how the collection's records name their id and version.
  /// - Returns: the server's record for a create or an update; nil for a delete.
  /// - Throws: `CourierError` of kind `notTheServer` naming the shortfall.
  package static func write(
    _ operation: OutboxOperation, response: HTTPResponse, body: Data, attempts: Int = 1,
    schema: RecordSchema
  ) throws -> ServerRecord? {
    try applied(operation, Reply(response, body, attempts), schema: schema, answers: .contract)
  }

  /// Checks the 2xx reply to a replayed write of a declared collection: as
  /// ``write(_:response:body:attempts:schema:)``, with the collection's schema and the statuses
  /// its declaration gives a proven write and a proven delete.
  /// - Parameters:
  ///   - operation: the operation that was sent.
  ///   - response: the reply; 2xx.
  ///   - body: the reply's body.
  ///   - attempts: how many attempts the call made (1 without retries), for the error.
  ///   - collection: the collection's declaration.
  /// - Returns: the server's record for a create or an update; nil for a delete.
  /// - Throws: `CourierError` of kind `notTheServer` naming the shortfall.
  package static func write(
    _ operation: OutboxOperation, response: HTTPResponse, body: Data, attempts: Int = 1,
    collection: CollectionDescription
  ) throws -> ServerRecord? {
    try applied(
      operation, Reply(response, body, attempts), schema: collection.schema,
      answers: collection.answers)
  }

  /// What a 2xx reply to a replayed write proves.
  package enum Proof: Equatable, Sendable {
    /// The write was applied: the server's record for a create or an update, nil for a delete.
    case applied(ServerRecord?)
    /// An update was applied as a creation: `201 Created` with the record written, at a
    /// version not above the write's base. The record had been deleted at the server, whose
    /// `PUT` creates a missing record (the reference backend's), and this write made it anew
    /// (decision 2401). As much proof as a create's; a `200` at such a version stays
    /// `reply_stale_version`.
    case recreated(ServerRecord)
  }

  /// Checks the 2xx reply to a replayed write of a declared collection, telling a re-creation
  /// apart: as ``write(_:response:body:attempts:collection:)``, but an update answered `201` with
  /// the record at a version not above its base is `.recreated`, not a failure.
  /// - Parameters:
  ///   - operation: the operation that was sent.
  ///   - response: the reply; 2xx.
  ///   - body: the reply's body.
  ///   - attempts: how many attempts the call made (1 without retries), for the error.
  ///   - collection: the collection's declaration.
  /// - Returns: what the reply proves.
  /// - Throws: `CourierError` of kind `notTheServer` naming the shortfall.
  package static func proof(
    _ operation: OutboxOperation, response: HTTPResponse, body: Data, attempts: Int = 1,
    collection: CollectionDescription
  ) throws -> Proof {
    try proof(
      operation, Reply(response, body, attempts), schema: collection.schema,
      answers: collection.answers)
  }

  /// A reply as the checks read it: the head, the body's bytes and the attempts it took.
  private struct Reply {
    let head: HTTPResponse
    let body: Data
    let attempts: Int
    var status: Int { head.status.code }

    init(_ head: HTTPResponse, _ body: Data, _ attempts: Int) {
      self.head = head
      self.body = body
      self.attempts = attempts
    }
  }

  /// The record of an applied write; a re-creation is not one (`reply_stale_version`).
  private static func applied(
    _ operation: OutboxOperation, _ response: Reply, schema: RecordSchema,
    answers: ServerAnswers
  ) throws -> ServerRecord? {
    switch try proof(operation, response, schema: schema, answers: answers) {
    case .applied(let record): return record
    case .recreated: throw failure(.staleVersion, response, operation)
    }
  }

  private static func proof(
    _ operation: OutboxOperation, _ response: Reply, schema: RecordSchema,
    answers: ServerAnswers
  ) throws -> Proof {
    switch operation.kind {
    case .delete:
      // 204 has no body; a 200 with an empty body says the same. A body here is a page.
      // (A 204 has no body by definition: what follows it is not read as one.)
      let empty = response.status == 204 || isBlank(response.body)
      let declared = answers.deleteStatuses.contains(response.status)
      guard (declared || response.status == 200) && empty else {
        throw failure(
          declared || response.status == 200 ? .unexpectedBody : .unexpectedStatus, response,
          operation)
      }
      return .applied(nil)
    case .create, .update:
      guard answers.writeStatuses.contains(response.status) else {
        throw failure(.unexpectedStatus, response, operation)
      }
      let json: JSONValue
      do {
        json = try JSONValue(parsing: response.body)
      } catch {
        throw unparseable(response, operation, error)
      }
      guard let record = try? schema.serverRecord(from: json) else {
        throw failure(.notRecord, response, operation)
      }
      guard record.id == operation.key.id else {
        throw failure(.otherRecord, response, operation)
      }
      if let base = operation.baseVersion, record.version <= base {
        guard operation.kind == .update, response.status == 201 else {
          throw failure(.staleVersion, response, operation)
        }
        return .recreated(record)
      }
      return .applied(record)
    }
  }

  /// Whether a refusal of a delete means the record is already gone at the server: a 404 that
  /// carries the server's own error body (`code` `not_found`), not a portal's 404 page.
  /// - Parameter error: the classified refusal.
  /// - Returns: true when the delete's effect holds.
  package static func deleteAlreadyApplied(_ error: CourierError) -> Bool {
    error.status == 404 && error.code == "not_found"
  }

  /// Checks the 2xx reply to an upload.
  /// - Parameters:
  ///   - response: the reply; 2xx.
  ///   - body: the reply's body.
  ///   - attempts: how many attempts the call made (1 without retries), for the error.
  ///   - confirmation: what the reply must show.
  ///   - fileSize: the size of the file part that was sent, checked against the record's
  ///     `size` when it has one.
  /// - Returns: the parsed body, when there is one.
  /// - Throws: `CourierError` of kind `notTheServer` naming the shortfall.
  @discardableResult
  package static func upload(
    _ response: HTTPResponse, body: Data, attempts: Int = 1, confirmation: UploadConfirmation,
    fileSize: Int64?
  ) throws -> JSONValue? {
    let response = Reply(response, body, attempts)
    guard (200..<300).contains(response.status) else {
      throw failure(.unexpectedStatus, response, nil)
    }
    if confirmation == .status {
      return isBlank(response.body) ? nil : try? JSONValue(parsing: response.body)
    }
    let json: JSONValue
    do {
      json = try JSONValue(parsing: response.body)
    } catch {
      throw unparseable(response, nil, error)
    }
    guard confirmation == .record else { return json }
    let id: String? =
      switch json["id"] {
      case .string(let text): text.isEmpty ? nil : text
      case .number(let number): number.int64Value.map(String.init) ?? number.description
      default: nil
      }
    guard case .object = json, id != nil else { throw failure(.notUploadRecord, response, nil) }
    if let size = json["size"], let fileSize {
      guard size == .integer(fileSize) else {
        throw failure(.notUploadRecord, response, nil)
      }
    }
    return json
  }

  /// Checks that a successful reply to a read is the API's: JSON, or no body at all. Every
  /// body of the contract is JSON; a page (a Wi-Fi login page answering `200` to every
  /// request) is never shown as if the server had sent it.
  /// - Parameters:
  ///   - response: the reply, 2xx or 304.
  ///   - body: the reply's body.
  ///   - attempts: how many attempts the call made (1 without retries), for the error.
  /// - Throws: `CourierError` of kind `notTheServer` when the body is not JSON.
  package static func apiReply(_ response: HTTPResponse, body: Data, attempts: Int = 1) throws {
    let response = Reply(response, body, attempts)
    guard !isBlank(response.body) else { return }
    do {
      _ = try JSONValue(parsing: response.body)
    } catch {
      throw unparseable(response, nil, error)
    }
  }

  /// The failure for a 2xx body that is not JSON, told apart by what the reply says it is
  /// (decision 2423). A body that says it is JSON (`application/json`, `…+json`) and does not
  /// parse (broken, cut short, nested past the parser's depth) came from something that speaks
  /// the API: a bad reply, `invalidResponse` (`reply_bad_json`, exit 76). Any other (a page, a
  /// text, no type) is what a Wi-Fi login page or a proxy answers: `notTheServer`
  /// (`reply_not_json`, exit 69). JSON refused for its nesting alone (deeper than
  /// `JSONValue.maximumDepth`) is a bad reply whatever its type (`reply_too_deep`, decision
  /// 2428): no portal nests its page 10,000 levels deep. Either way nothing is known to have
  /// been applied, and a queued write stays pending with its Idempotency-Key.
  /// - Parameters:
  ///   - contentType: the reply's `Content-Type`, if any.
  ///   - status: the reply's status.
  ///   - bytes: the body's length.
  ///   - attempts: how many attempts the call made.
  ///   - context: what was being done.
  ///   - error: why the parser refused the body, when known.
  /// - Returns: the error.
  package static func unparseable(
    contentType: String?, status: Int, bytes: Int, attempts: Int = 1, context: String?,
    error: JSONValue.ParseError? = nil
  ) -> CourierError {
    let type = contentType.map { ", Content-Type \($0)" } ?? ""
    let underlying = "status \(status)\(type), \(bytes) bytes"
    if let error, error.tooDeepAt != nil {
      return CourierError(
        .invalidResponse, status: status, code: "reply_too_deep", mayHaveReachedServer: true,
        attempts: attempts, underlying: underlying + ", \(error)", context: context)
    }
    guard saysJSON(contentType) else {
      return CourierError(
        .notTheServer, status: status, code: Shortfall.notJSON.rawValue, attempts: attempts,
        underlying: underlying, context: context)
    }
    return CourierError(
      .invalidResponse, status: status, code: "reply_bad_json", mayHaveReachedServer: true,
      attempts: attempts, underlying: underlying + ", not valid JSON", context: context)
  }

  /// Whether a `Content-Type` names JSON: `application/json`, `text/json` or a `+json` type.
  static func saysJSON(_ contentType: String?) -> Bool {
    guard let contentType else { return false }
    let media = (contentType.split(separator: ";", maxSplits: 1).first ?? "")
      .trimmingSpacesAndTabs().lowercased()
    return media.hasSuffix("/json") || media.hasSuffix("+json")
  }

  private static func unparseable(
    _ response: Reply, _ operation: OutboxOperation?, _ error: JSONValue.ParseError
  ) -> CourierError {
    unparseable(
      contentType: response.head.headerFields[.contentType], status: response.status,
      bytes: response.body.count, attempts: response.attempts,
      context: operation.map { "\($0.kind.rawValue) \($0.key)" }, error: error)
  }

  private static func isBlank(_ body: Data) -> Bool {
    body.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
  }

  private static func failure(
    _ shortfall: Shortfall, _ response: Reply, _ operation: OutboxOperation?
  ) -> CourierError {
    let type = response.head.headerFields[.contentType].map { ", Content-Type \($0)" } ?? ""
    return CourierError(
      .notTheServer, status: response.status, code: shortfall.rawValue,
      attempts: response.attempts,
      underlying: "status \(response.status)\(type), \(response.body.count) bytes",
      context: operation.map { "\($0.kind.rawValue) \($0.key)" })
  }
}
