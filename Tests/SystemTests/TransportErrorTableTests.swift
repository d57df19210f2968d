import CourierSystem
import Testing

@Suite("TransportErrorTable")
struct TransportErrorTableTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let code: Int
    let message: String
    let offline: Bool
    let kind: TransportFailure
    var testDescription: String { "\(code) \(message) offline: \(offline) → \(kind)" }
  }

  static let rows: [Row] = [
    Row(
      code: -1004, message: "Could not connect to the server.", offline: false,
      kind: .cannotReachHost),
    Row(
      code: -1004, message: "Could not connect to the server.", offline: true, kind: .offline),
    Row(code: -1004, message: "", offline: false, kind: .cannotReachHost),
    Row(code: -1, message: "Couldn't connect to server", offline: false, kind: .cannotReachHost),
    Row(code: -1, message: "Couldn't connect to server", offline: true, kind: .offline),
    // libcurl's CURLE_PARTIAL_FILE: the reply ended before its length (decision 2436).
    Row(
      code: -1, message: "transfer closed with 990 bytes remaining to read", offline: false,
      kind: .invalidResponse),
    Row(
      code: -1, message: "transfer closed with outstanding read data remaining", offline: false,
      kind: .invalidResponse),
    Row(code: -1, message: "Connection reset by peer", offline: false, kind: .connectionLost),
    Row(
      code: -1, message: "SSL certificate problem: self signed certificate", offline: false,
      kind: .tls),
    Row(code: -1001, message: "The request timed out.", offline: false, kind: .timedOut),
    Row(
      code: -1003, message: "A server with the specified hostname could not be found.",
      offline: false, kind: .dns),
    Row(code: -1003, message: "", offline: true, kind: .offline),
    Row(code: -1009, message: "", offline: false, kind: .offline),
    Row(
      code: -1005, message: "The network connection was lost.", offline: false,
      kind: .connectionLost),
    Row(code: -1011, message: "", offline: false, kind: .connectionLost),
    Row(code: -1017, message: "", offline: false, kind: .invalidResponse),
    Row(
      code: -1002, message: "Received HTTP/0.9 when not allowed", offline: false,
      kind: .invalidResponse),
    Row(code: -1002, message: "unsupported URL", offline: false, kind: .invalidInput),
    Row(code: -999, message: "cancelled", offline: false, kind: .cancelled),
    Row(code: -1, message: "Failed writing header", offline: false, kind: .invalidResponse),
    Row(code: -1202, message: "", offline: false, kind: .tls),
  ]

  @Test("URLError codes on Linux", arguments: rows)
  func maps(_ row: Row) {
    let outcome = TransportErrorTable.classify(
      urlErrorCode: row.code, message: row.message, offline: row.offline)
    #expect(outcome.kind == row.kind)
  }
}
