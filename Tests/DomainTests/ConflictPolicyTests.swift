import CourierDomain
import Foundation
import Testing

@Suite("ConflictPolicy")
struct ConflictPolicyTests {
  static let serverTime = Date(timeIntervalSinceReferenceDate: 10_000)

  struct Row: Sendable, CustomStringConvertible {
    var name: String
    var policy: ConflictPolicy
    /// Seconds between the local edit and the server's `updated_at` (positive: local is newer).
    var localMinusServer: TimeInterval
    var serverHasTime = true
    var serverRecord = true
    var expected: ConflictResolution
    var description: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "LWW, local newer → re-send on the server's version", policy: .lastWriteWins,
      localMinusServer: 5, expected: .resend(baseVersion: 7)),
    Row(
      name: "LWW, server newer → take the server's", policy: .lastWriteWins,
      localMinusServer: -5, expected: .takeServer),
    Row(
      name: "LWW, same instant → the server's (tie)", policy: .lastWriteWins,
      localMinusServer: 0, expected: .takeServer),
    Row(
      name: "LWW, server without a time → local", policy: .lastWriteWins, localMinusServer: -5,
      serverHasTime: false, expected: .resend(baseVersion: 7)),
    Row(
      name: "serverWins, local newer → still the server's", policy: .serverWins,
      localMinusServer: 5, expected: .takeServer),
    Row(
      name: "serverWins, server newer", policy: .serverWins, localMinusServer: -5,
      expected: .takeServer),
    Row(
      name: "manual, local newer → keep both", policy: .manual, localMinusServer: 5,
      expected: .keepBoth),
    Row(
      name: "manual, server newer → keep both", policy: .manual, localMinusServer: -5,
      expected: .keepBoth),
    Row(
      name: "merge on the record level alone → keep both (ReplayDecision merges)",
      policy: .merge, localMinusServer: 5, expected: .keepBoth),
    Row(
      name: "LWW without the server's record → keep both", policy: .lastWriteWins,
      localMinusServer: 5, serverRecord: false, expected: .keepBoth),
    Row(
      name: "serverWins without the server's record → keep both", policy: .serverWins,
      localMinusServer: 5, serverRecord: false, expected: .keepBoth),
  ]

  @Test("decision table", arguments: rows)
  func decision(_ row: Row) {
    let server = ServerRecord(
      id: "a", payload: .object(["title": .string("server")]), version: 7,
      updatedAt: row.serverHasTime ? Self.serverTime : nil)
    let local = Self.serverTime.addingTimeInterval(row.localMinusServer)
    let resolution = row.policy.resolve(
      localEditAt: local, server: row.serverRecord ? server : nil)
    #expect(resolution == row.expected)
  }

  @Test(
    "configuration spellings",
    arguments: [
      ("lastWriteWins", ConflictPolicy.lastWriteWins), ("last_write_wins", .lastWriteWins),
      ("LAST-WRITE-WINS", .lastWriteWins), ("serverWins", .serverWins),
      ("server_wins", .serverWins), ("manual", .manual), ("merge", .merge), ("MERGE", .merge),
    ])
  func parse(_ text: String, _ expected: ConflictPolicy) {
    #expect(ConflictPolicy.parse(text) == expected)
  }

  @Test("unknown spellings are refused", arguments: ["", "clientWins", "last write wins x"])
  func parseUnknown(_ text: String) {
    #expect(ConflictPolicy.parse(text) == nil)
  }
}

@Suite("ConflictPolicy values")
struct ConflictPolicyValueTests {
  @Test("a policy is matched with == and in a switch with a default")
  func matchingForms() {
    let policy = ConflictPolicy.merge
    #expect(policy == .merge && policy != .manual)
    let word: String
    switch policy {
    case .lastWriteWins: word = "newer"
    case .merge: word = "fields"
    default: word = "other"
    }
    #expect(word == "fields")
    #expect(
      ConflictPolicy.allCases.map(\.rawValue) == [
        "lastWriteWins", "serverWins", "manual", "merge",
      ])
  }
}
