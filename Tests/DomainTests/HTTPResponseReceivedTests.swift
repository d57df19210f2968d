import CourierDomain
import HTTPTypes
import Testing

/// What an adapter may hand swift-http-types: a head it cannot hold is a bad reply, never a
/// trap in `HTTPResponse.Status` or `HTTPFields` (decision 2201).
@Suite("HTTPResponse as received")
struct HTTPResponseReceivedTests {
  @Test(
    "a valid head keeps its status and its fields, in order", arguments: [0, 100, 200, 599, 999])
  func valid(_ status: Int) throws {
    let response = try HTTPResponse(
      receivedStatus: status,
      fields: [
        (name: "Content-Type", value: "application/json"), (name: "x-b", value: "2"),
        (name: "X-B", value: "3"), (name: "!#$%&'*+-.^_`|~09az", value: ""),
      ], context: "GET /x")
    #expect(response.status.code == status)
    #expect(
      response.headerFields.map(\.name.rawName) == [
        "Content-Type", "x-b", "X-B", "!#$%&'*+-.^_`|~09az",
      ])
    #expect(response.headerFields[.contentType] == "application/json")
    let b = try #require(HTTPField.Name("x-b"))
    #expect(response.headerFields[values: b] == ["2", "3"])
  }

  @Test(
    "a status HTTPResponse.Status refuses is a bad reply",
    arguments: [-1, 1000, 1_000_000, Int.min, Int.max])
  func badStatus(_ status: Int) {
    let error = #expect(throws: CourierError.self) {
      try HTTPResponse(receivedStatus: status, fields: [], context: "GET /x")
    }
    #expect(error?.kind == .invalidResponse)
    #expect(error?.code == "reply_status_invalid")
    #expect(error?.context == "GET /x")
    #expect(error?.isTransient == false)
  }

  @Test(
    "a field name that is not a token is a bad reply",
    arguments: ["", "Bad Name", "X(y)", ":status", "a:b", "tab\there", "é", "a\r\nb", "x\u{0}"])
  func badFieldName(_ name: String) {
    let error = #expect(throws: CourierError.self) {
      try HTTPResponse(
        receivedStatus: 200, fields: [(name: "Good", value: "1"), (name: name, value: "v")],
        context: "GET /x")
    }
    #expect(error?.kind == .invalidResponse)
    #expect(error?.code == "reply_field_name_invalid")
    // The name is named for logs, escaped: one line whatever the server sent.
    #expect(error?.underlying?.contains("\r") == false)
    #expect(error?.underlying?.contains("\n") == false)
  }

  @Test("field values are taken as HTTPField takes them: a control character becomes a space")
  func values() throws {
    let response = try HTTPResponse(
      receivedStatus: 200, fields: [(name: "X-Note", value: "a\u{1B}b\u{7F}c")], context: nil)
    let note = try #require(HTTPField.Name("X-Note"))
    #expect(response.headerFields[note] == "a b c")
  }

  @Test("as many fields as HTTPFields holds, and one more is a bad reply")
  func fieldCount() throws {
    let most = HTTPResponse.maxReceivedFields
    #expect(most == 65_534)
    let many = Array(repeating: (name: "a", value: ""), count: most)
    let response = try HTTPResponse(receivedStatus: 200, fields: many, context: nil)
    #expect(response.headerFields.count == most)
    let error = #expect(throws: CourierError.self) {
      try HTTPResponse(receivedStatus: 200, fields: many + [(name: "a", value: "")], context: nil)
    }
    #expect(error?.kind == .invalidResponse)
    #expect(error?.code == "reply_too_many_fields")
  }

  struct LengthRow: Sendable, CustomTestStringConvertible {
    let fields: [String]
    let conflict: Bool
    var testDescription: String { "\(fields) → \(conflict ? "bad reply" : "one length")" }
  }

  /// Each field `Name: value`.
  static let lengthRows: [LengthRow] = [
    LengthRow(fields: ["Content-Length: 10"], conflict: false),
    LengthRow(fields: ["Content-Length: 10", "content-length: 10"], conflict: false),
    LengthRow(fields: ["Content-Length: 10, 10", "Content-Length:10"], conflict: false),
    LengthRow(fields: ["Content-Length: 010", "Content-Length: 10"], conflict: false),
    LengthRow(fields: ["Content-Length: 0"], conflict: false),
    // A list may have empty members (RFC 9110 §5.6.1).
    LengthRow(fields: ["Content-Length: 10,", "Content-Length: , 10"], conflict: false),
    LengthRow(fields: ["Content-Length: 999999999999999999"], conflict: false),
    LengthRow(fields: ["Transfer-Encoding: chunked"], conflict: false),
    LengthRow(fields: ["X-Content-Length: 1", "Content-Length: 2"], conflict: false),
    LengthRow(fields: ["Content-Length: 10", "Content-Length: 20"], conflict: true),
    LengthRow(fields: ["CONTENT-LENGTH: 20", "Content-Length: 10"], conflict: true),
    LengthRow(fields: ["Content-Length: 10, 20"], conflict: true),
    LengthRow(fields: ["Content-Length: 10", "Transfer-Encoding: chunked"], conflict: true),
    LengthRow(fields: ["transfer-encoding: gzip, chunked", "Content-Length: 3"], conflict: true),
    LengthRow(fields: ["Content-Length: abc"], conflict: true),
    LengthRow(fields: ["Content-Length: "], conflict: true),
    LengthRow(fields: ["Content-Length: ,"], conflict: true),
    LengthRow(fields: ["Content-Length: -1"], conflict: true),
    LengthRow(fields: ["Content-Length: +1"], conflict: true),
    LengthRow(fields: ["Content-Length: 1 0"], conflict: true),
    LengthRow(fields: ["Content-Length: 0x10"], conflict: true),
    LengthRow(fields: ["Content-Length: 1234567890123456789"], conflict: true),
    LengthRow(fields: ["Content-Length: ١٠"], conflict: true),
  ]

  @Test(
    "a head gives its body one length, or it is a bad reply (RFC 9112 §6.3)",
    arguments: lengthRows)
  func lengths(_ row: LengthRow) throws {
    let fields = row.fields.map { line in
      let parts = line.split(separator: ":", maxSplits: 1)
      return (
        name: String(parts[0]),
        value: String(parts.count > 1 ? parts[1].drop { $0 == " " } : "")
      )
    }
    #expect((HTTPResponse.receivedLengthConflict(in: fields) != nil) == row.conflict)
    do {
      _ = try HTTPResponse(receivedStatus: 200, fields: fields, context: "GET /x")
      #expect(!row.conflict)
    } catch {
      #expect(row.conflict)
      #expect(error.code == "reply_length_conflict")
      #expect(error.kind == .invalidResponse && error.mayHaveReachedServer)
    }
  }
}
