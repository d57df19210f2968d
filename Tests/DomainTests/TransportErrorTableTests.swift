import CourierDomain
import Testing

@Suite("TransportErrorTable")
struct TransportErrorTableTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let code: Int
    let message: String
    let path: PathStatus
    let kind: CourierError.Kind
    var testDescription: String { "\(code) \(message) \(path) → \(kind)" }
  }

  static let rows: [Row] = [
    Row(
      code: -1004, message: "Could not connect to the server.", path: .satisfied,
      kind: .cannotReachHost),
    Row(
      code: -1004, message: "Could not connect to the server.", path: .unsatisfied, kind: .offline),
    Row(code: -1004, message: "", path: .unknown, kind: .cannotReachHost),
    Row(code: -1, message: "Couldn't connect to server", path: .satisfied, kind: .cannotReachHost),
    Row(code: -1, message: "Couldn't connect to server", path: .unsatisfied, kind: .offline),
    Row(
      code: -1, message: "transfer closed with 990 bytes remaining to read", path: .satisfied,
      kind: .connectionLost),
    Row(
      code: -1, message: "SSL certificate problem: self signed certificate", path: .satisfied,
      kind: .tls),
    Row(code: -1001, message: "The request timed out.", path: .satisfied, kind: .timedOut),
    Row(
      code: -1003, message: "A server with the specified hostname could not be found.",
      path: .satisfied, kind: .dns),
    Row(code: -1003, message: "", path: .unsatisfied, kind: .offline),
    Row(code: -1009, message: "", path: .unknown, kind: .offline),
    Row(
      code: -1005, message: "The network connection was lost.", path: .satisfied,
      kind: .connectionLost),
    Row(code: -1011, message: "", path: .satisfied, kind: .connectionLost),
    Row(code: -1017, message: "", path: .satisfied, kind: .invalidResponse),
    Row(
      code: -1002, message: "Received HTTP/0.9 when not allowed", path: .satisfied,
      kind: .invalidResponse),
    Row(code: -1002, message: "unsupported URL", path: .satisfied, kind: .invalidInput),
    Row(code: -999, message: "cancelled", path: .satisfied, kind: .cancelled),
    Row(code: -1, message: "Failed writing header", path: .satisfied, kind: .invalidResponse),
    Row(code: -1202, message: "", path: .satisfied, kind: .tls),
  ]

  @Test("URLError codes on Linux", arguments: rows)
  func maps(_ row: Row) {
    #expect(
      TransportErrorTable.classify(urlErrorCode: row.code, message: row.message, path: row.path)
        .kind
        == row.kind)
  }
}
