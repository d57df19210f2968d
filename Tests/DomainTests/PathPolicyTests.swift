import CourierDomain
import Foundation
import Testing

/// The path policy (decision 2610), every row: each kind of work × each fact of the path ×
/// small or large × the work's own permission to use an expensive path.
@Suite("PathPolicy")
struct PathPolicyTests {
  static let mib: Int64 = 1 << 20

  static func path(_ facts: Set<PathPolicy.Fact>) -> NetworkPath {
    NetworkPath(
      status: facts.contains(.captivePortal) ? .captivePortal : .satisfied,
      isExpensive: facts.contains(.expensive), isConstrained: facts.contains(.constrained))
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var work: PathPolicy.Work
    var bytes: Int64?
    var facts: Set<PathPolicy.Fact>
    var allowsExpensive = false
    var wait: PathPolicy.Wait?
    var testDescription: String {
      "\(work) \(bytes.map(String.init) ?? "?") B on \(facts.map(\.rawValue).sorted())"
        + (allowsExpensive ? " allowed" : "") + " → \(wait?.rawValue ?? "go")"
    }
  }

  static let rows: [Row] = {
    var rows: [Row] = []
    let large = 5 * mib
    for work in PathPolicy.Work.allCases {
      for bytes in [nil, 1024, mib, mib + 1, large] as [Int64?] {
        for facts in [
          [], [.expensive], [.constrained], [.captivePortal],
          [.expensive, .constrained], [.captivePortal, .expensive],
        ] as [Set<PathPolicy.Fact>] {
          for allows in [false, true] {
            rows.append(
              Row(
                work: work, bytes: bytes, facts: facts, allowsExpensive: allows,
                wait: expected(work, bytes, facts, allows)))
          }
        }
      }
    }
    return rows
  }()

  /// The defaults as the issue words them, written independently of the table.
  static func expected(
    _ work: PathPolicy.Work, _ bytes: Int64?, _ facts: Set<PathPolicy.Fact>, _ allows: Bool
  ) -> PathPolicy.Wait? {
    // A request a person runs is never held.
    if work == .requests { return nil }
    // Nothing but requests goes behind a portal: a portal is not the server.
    if facts.contains(.captivePortal) { return .portal }
    // Writes (and transfers of at most 1 MiB) go anywhere the server answers.
    let large = (bytes ?? .max) > mib
    if work == .writes || !large { return nil }
    if facts.contains(.expensive) && !allows { return .expensive }
    if facts.contains(.constrained) { return .constrained }
    return nil
  }

  @Test("the defaults, every row", arguments: rows)
  func defaults(_ row: Row) {
    let wait = PathPolicy.standard.wait(
      for: row.work, bytes: row.bytes, on: Self.path(row.facts),
      allowsExpensive: row.allowsExpensive)
    #expect(wait == row.wait)
  }

  @Test("a configured row: uploads allowed on expensive paths, writes behind a portal")
  func configured() {
    var policy = PathPolicy.standard
    policy.allowed[.uploads] = [.expensive]
    policy.allowed[.writes] = [.expensive, .constrained, .captivePortal]
    policy.largeTransferBytes = 0
    #expect(policy.wait(for: .uploads, bytes: 10, on: Self.path([.expensive])) == nil)
    #expect(policy.wait(for: .uploads, bytes: 10, on: Self.path([.constrained])) == .constrained)
    #expect(policy.wait(for: .writes, on: Self.path([.captivePortal])) == nil)
    // A zero threshold: every upload of a byte or more follows its own row.
    #expect(policy.wait(for: .downloads, bytes: 1, on: Self.path([.expensive])) == .expensive)
  }

  @Test("the sentences say what is awaited")
  func sentences() {
    #expect(PathPolicy.Wait.expensive.sentence == "waiting for an unmetered network")
    #expect(
      PathPolicy.Wait.portal.sentence == "waiting for the Wi-Fi login page to be passed")
    #expect(PathPolicy.Wait.constrained.sentence.hasPrefix("waiting for"))
  }

  @Test("facts as a configuration value spells them")
  func parsing() {
    #expect(PathPolicy.facts("expensive, constrained") == [.expensive, .constrained])
    #expect(PathPolicy.facts("captive-portal") == [.captivePortal])
    #expect(PathPolicy.facts("CAPTIVE_PORTAL expensive") == [.captivePortal, .expensive])
    #expect(PathPolicy.facts("none") == [])
    #expect(PathPolicy.facts("") == [])
    #expect(PathPolicy.facts("metered") == nil)
  }

  @Test("an outbox entry's work: a queued upload with its length and permission, else a write")
  func work() throws {
    var upload = QueuedUpload(
      transfer: .tus, tusEndpoint: "http://h/uploads", formTarget: nil, title: "t",
      filename: "f", contentType: "image/jpeg", length: 5 << 20, boundary: "b", source: "/f",
      verdict: CompressionDecision.Verdict(
        send: .original, reason: .notAnImage, message: "not an image"))
    let id = UUID()
    let entry = { (payload: QueuedUpload) in
      OutboxEntry(
        sequence: 1, operation: payload.operation(id: id, uploadID: "u", enqueuedAt: Date()))
    }
    let held = PathPolicy.work(of: entry(upload))
    #expect(held.work == .uploads && held.bytes == 5 << 20 && !held.allowsExpensive)
    upload.allowsExpensive = true
    #expect(PathPolicy.work(of: entry(upload)).allowsExpensive)
    #expect(try QueuedUpload(payload: entry(upload).operation.payload).allowsExpensive)
    let write = OutboxEntry(
      sequence: 2,
      operation: OutboxOperation(
        id: UUID(), key: RecordKey(collection: "articles", id: "a"), kind: .create,
        payload: .object([:]), baseVersion: nil, enqueuedAt: Date()))
    #expect(PathPolicy.work(of: write).work == .writes)
  }
}

/// What the captive-portal probe concludes from an answer (decision 2612).
@Suite("PortalCheck")
struct PortalCheckTests {
  @Test("the probe URL: 204 and 200 {\"ok\": true} are open; a redirect or a page is a portal")
  func probe() {
    #expect(PortalCheck.probeAnswer(status: 204, body: Data()) == .open)
    #expect(PortalCheck.probeAnswer(status: 200, body: Data(#"{"ok": true}"#.utf8)) == .open)
    #expect(
      PortalCheck.probeAnswer(status: 302, body: Data(), location: "http://login/")
        == .portal(userPortalURL: "http://login/"))
    #expect(
      PortalCheck.probeAnswer(status: 200, body: Data("<html>sign in</html>".utf8))
        == .portal(userPortalURL: nil))
    #expect(
      PortalCheck.probeAnswer(status: 200, body: Data(#"{"ok": false}"#.utf8))
        == .portal(userPortalURL: nil))
    #expect(PortalCheck.probeAnswer(status: 511, body: Data()) == .portal(userPortalURL: nil))
    #expect(PortalCheck.probeAnswer(status: 503, body: Data()) == .unknown)
  }

  @Test("RFC 8908's API: captive true or false decides; anything else does not")
  func captiveAPI() {
    let type = "application/captive+json"
    #expect(
      PortalCheck.captiveAPIAnswer(
        status: 200, contentType: type,
        body: Data(#"{"captive": true, "user-portal-url": "https://p/login"}"#.utf8))
        == .portal(userPortalURL: "https://p/login"))
    #expect(
      PortalCheck.captiveAPIAnswer(
        status: 200, contentType: "application/captive+json; charset=utf-8",
        body: Data(#"{"captive": false}"#.utf8)) == .open)
    #expect(
      PortalCheck.captiveAPIAnswer(
        status: 200, contentType: "text/html", body: Data(#"{"captive": false}"#.utf8))
        == .unknown)
    #expect(
      PortalCheck.captiveAPIAnswer(status: 404, contentType: type, body: Data()) == .unknown)
    #expect(
      PortalCheck.captiveAPIAnswer(status: 200, contentType: type, body: Data("{}".utf8))
        == .unknown)
  }

  @Test("a usable path a portal holds is published as captivePortal; a path down stays down")
  func path() {
    let up = NetworkPath(status: .satisfied, isExpensive: true)
    #expect(PortalCheck.path(up, portal: true).status == .captivePortal)
    #expect(PortalCheck.path(up, portal: true).sources.status == .probe)
    #expect(PortalCheck.path(up, portal: true).isExpensive)
    #expect(PortalCheck.path(up, portal: false).status == .satisfied)
    #expect(
      PortalCheck.path(NetworkPath(status: .unsatisfied), portal: true).status == .unsatisfied)
  }
}
