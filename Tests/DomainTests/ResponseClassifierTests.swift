import CourierDomain
import Foundation
import HTTPTypes
import Testing

@Suite("ResponseClassifier")
struct ResponseClassifierTests {
  static func response(
    _ status: Int, _ body: String, type: String = "application/json",
    headerFields: HTTPFields = [:]
  )
    -> (HTTPResponse, Data)
  {
    var all = headerFields
    all[.contentType] = type
    return (HTTPResponse(status: .init(code: status), headerFields: all), Data(body.utf8))
  }

  /// The classifier's verdict on a response and its body.
  static func classify(_ answer: (HTTPResponse, Data)) -> CourierError? {
    ResponseClassifier.classify(answer.0, body: answer.1)
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let status: Int
    let body: String
    let kind: CourierError.Kind
    let code: String?
    let transient: Bool
    var testDescription: String { "\(status) \(code ?? "-") → \(kind)" }
  }

  static let rows: [Row] = [
    Row(
      status: 400, body: #"{"code":"bad_request","message":"Malformed JSON"}"#, kind: .business,
      code: "bad_request", transient: false),
    Row(
      status: 400, body: #"{"code":"bad_multipart","message":"Bad body"}"#, kind: .business,
      code: "bad_multipart", transient: false),
    Row(
      status: 401, body: #"{"code":"unauthorized","message":"Token expired"}"#, kind: .unauthorized,
      code: "unauthorized", transient: false),
    Row(
      status: 404, body: #"{"code":"not_found","message":"No such article"}"#, kind: .business,
      code: "not_found", transient: false),
    Row(
      status: 409,
      body: #"{"code":"version_conflict","message":"Stale","current":{"id":"a","version":3}}"#,
      kind: .conflict, code: "version_conflict", transient: false),
    Row(
      status: 409, body: #"{"code":"idempotency_in_flight","message":"busy"}"#, kind: .overloaded,
      code: "idempotency_in_flight", transient: true),
    Row(
      status: 409, body: #"{"code":"already_exists","message":"Exists"}"#, kind: .business,
      code: "already_exists", transient: false),
    Row(
      status: 413, body: "<html><body>413 Request Entity Too Large</body></html>", kind: .business,
      code: nil, transient: false),
    Row(
      status: 422, body: #"{"code":"image_too_large","message":"The image is over 10 MiB."}"#,
      kind: .business, code: "image_too_large", transient: false),
    Row(
      status: 422,
      body: #"{"code":"validation_failed","message":"Title is empty","field":"title"}"#,
      kind: .business, code: "validation_failed", transient: false),
    Row(
      status: 428, body: #"{"code":"precondition_required","message":"Need If-Match"}"#,
      kind: .business, code: "precondition_required", transient: false),
    Row(
      status: 429, body: #"{"code":"rate_limited","message":"slow down"}"#, kind: .overloaded,
      code: "rate_limited", transient: true),
    Row(status: 503, body: "", kind: .overloaded, code: nil, transient: true),
    Row(
      status: 500, body: #"{"code":"internal","message":"Traceback (most recent call last)"}"#,
      kind: .server, code: "internal", transient: true),
    Row(
      status: 502, body: "<!DOCTYPE html><html><h1>502 Bad Gateway</h1></html>", kind: .server,
      code: nil, transient: true),
    Row(status: 504, body: "garbage \u{0}\u{1}", kind: .server, code: nil, transient: true),
  ]

  @Test("status and body classify as the contract says", arguments: rows)
  func classifies(_ row: Row) throws {
    let error = try #require(Self.classify(Self.response(row.status, row.body)))
    #expect(error.kind == row.kind)
    #expect(error.code == row.code)
    #expect(error.isTransient == row.transient)
    #expect(error.status == row.status)
    let message = error.userMessage
    #expect(!message.contains("<"))
    #expect(!message.contains(String(row.status)))
    #expect(!message.contains("Traceback"))
  }

  @Test("a status outside 100–599 is a bad reply, whatever its body", arguments: [600, 99, 0, 999])
  func outOfRange(_ status: Int) throws {
    let error = try #require(
      Self.classify(Self.response(status, #"{"code":"bad_request","message":"no"}"#)))
    #expect(error.kind == .invalidResponse)
    #expect(error.code == "reply_status_invalid")
    #expect(error.status == status)
    #expect(error.serverMessage == nil)
    let edges = [(599, CourierError.Kind.server), (100, nil)]
    for (edge, kind) in edges {
      #expect(Self.classify(Self.response(edge, "{}"))?.kind == kind, "\(edge)")
    }
  }

  @Test("2xx and 304 are not errors", arguments: [200, 201, 204, 304])
  func successes(_ status: Int) {
    #expect(
      ResponseClassifier.classify(HTTPResponse(status: .init(code: status)), body: Data()) == nil)
  }

  @Test("a business refusal shows the server's message as is")
  func businessMessage() throws {
    let error = try #require(
      Self.classify(
        Self.response(422, #"{"code":"image_too_large","message":"The image is over 10 MiB."}"#)))
    #expect(error.userMessage == "The image is over 10 MiB.")
  }

  @Test("RFC 9457 problem+json gives code and detail")
  func problemJSON() throws {
    let body =
      #"{"type":"https://example.com/probs/out-of-credit","title":"Out of credit","status":403,"detail":"Your balance is 30, but that costs 50.","code":"no_credit"}"#
    let error = try #require(
      Self.classify(Self.response(403, body, type: "application/problem+json")))
    #expect(error.kind == .business)
    #expect(error.code == "no_credit")
    #expect(error.userMessage == "Your balance is 30, but that costs 50.")
  }

  @Test("a conflict carries the server's record")
  func conflictCurrent() throws {
    let error = try #require(
      Self.classify(
        Self.response(
          409, #"{"code":"version_conflict","message":"Stale","current":{"id":"a","version":3}}"#)))
    #expect(error.current?["version"]?.intValue == 3)
  }

  @Test("HTML or markup in a message is never shown")
  func markupDropped() throws {
    let error = try #require(
      Self.classify(
        Self.response(422, #"{"code":"x","message":"<script>alert(1)</script>"}"#)))
    #expect(error.serverMessage == nil)
    #expect(error.userMessage == "The server refused the request.")
  }

  @Test("401 invalid_credentials and expired session read differently")
  func unauthorizedMessages() throws {
    let wrong = try #require(
      Self.classify(
        Self.response(401, #"{"code":"invalid_credentials","message":"Bad"}"#)))
    #expect(wrong.userMessage == "Wrong username or password.")
    let expired = try #require(
      Self.classify(
        Self.response(401, #"{"code":"unauthorized","message":"token expired"}"#)))
    #expect(expired.userMessage == "Your session has expired. Please log in again.")
  }

  @Test("503 with Retry-After seconds")
  func retryAfterSeconds() throws {
    let error = try #require(
      Self.classify(Self.response(503, "", headerFields: [.retryAfter: "7"])))
    #expect(error.retryAfter == .seconds(7))
    #expect(error.userMessage.contains("7 seconds"))
  }

  @Test("every kind has a message free of codes and markup", arguments: CourierError.Kind.allCases)
  func everyKindHasAMessage(_ kind: CourierError.Kind) {
    let message = CourierError(kind, status: 500).userMessage
    #expect(!message.isEmpty)
    #expect(!message.contains("500"))
    #expect(!message.contains("<"))
  }
}
