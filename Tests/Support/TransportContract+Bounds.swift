import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

// What no server and no saved session may make a transport do, whichever adapter it is: send a
// header that smuggles a line, hand the token to another origin, or inflate a gzip bomb without
// bound. Adapter targets run these with their own adapter (they were twin suites before, one a
// copy of the other).
extension TransportContract {
  /// The checks that need no backend, run with the others by `all`.
  static let bounds: [TransportContract] = [
    controlCharactersRefused, tokenOnlyToBaseOrigin, damagedTokenRefused, fieldNameNotAToken,
  ]

  static let controlCharactersRefused = TransportContract(
    name: "a header value with CR, LF or another control character never smuggles a line"
  ) { make, _ in
    // `HTTPFields` turns each control character into a space when the value is set (decision
    // 2201), so what a caller meant as a second line arrives as part of one field's value.
    let server = try LoopbackServer(.raw(AuthOriginCheck.ok))
    defer { server.stop() }
    let transport = make(.satisfied)
    let values = ["Bearer a\r\nX-Evil: 1", "Bearer a\nb", "a\u{0}b", "a\u{1B}[2Jb"]
    for value in values {
      _ = try await transport.send(
        HTTPRequest(method: .get, url: server.url, headerFields: [.authorization: value]))
    }
    let heads = server.requestHeads
    #expect(heads.count == values.count)
    for head in heads {
      let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
      #expect(!lines.contains { $0.hasPrefix("x-evil") }, "\(head)")
      #expect(lines.filter { $0.hasPrefix("authorization:") }.count == 1, "\(head)")
      #expect(
        !head.unicodeScalars.contains {
          ($0.value < 0x20 && $0 != "\r" && $0 != "\n") || $0.value == 0x7F
        }, "\(head.debugDescription)")
    }
    let first = heads.first?.split(separator: "\r\n").map(String.init) ?? []
    #expect(first.contains("authorization: bearer a  x-evil: 1"), "\(first)")
  }

  static let tokenOnlyToBaseOrigin = TransportContract(
    name: "under AuthTransport, the token goes to the base origin only (decision 0005)"
  ) { make, _ in
    let base = try LoopbackServer(.raw(AuthOriginCheck.ok))
    let other = try LoopbackServer(.raw(AuthOriginCheck.ok))
    defer {
      base.stop()
      other.stop()
    }
    let auth = AuthTransport(
      make(.satisfied), store: InMemoryCredentialStore(Credentials(accessToken: "tok-123")),
      refreshURL: base.url.appendingPathComponent("auth/refresh"))
    let heads = try await AuthOriginCheck.run(base: base, other: other) {
      try await auth.send($0, options: TransportOptions())
    }
    #expect(heads.base.count == 2)
    #expect(heads.base.first?.contains("authorization: bearer tok-123") == true, "\(heads.base)")
    // "localhost" is another origin than "127.0.0.1", even on the same port.
    #expect(heads.base.last?.contains("authorization") == false, "\(heads.base)")
    #expect(heads.other.count == 1)
    #expect(heads.other.allSatisfy { !$0.contains("authorization") }, "\(heads.other)")
  }

  static let damagedTokenRefused = TransportContract(
    name: "under AuthTransport, a saved token with CR/LF is refused before anything is sent"
  ) { make, _ in
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let auth = AuthTransport(
      make(.satisfied),
      store: InMemoryCredentialStore(Credentials(accessToken: "tok\r\nX-Evil: 1")),
      refreshURL: server.url.appendingPathComponent("auth/refresh"))
    do {
      _ = try await auth.send(
        HTTPRequest(method: .get, url: server.url), options: TransportOptions())
      Issue.record("expected a refusal")
    } catch let error as CourierError {
      #expect(error.kind == .unauthorized)
      #expect(error.code == "damaged_session")
      #expect(error.userMessage == "The saved session is damaged. Please log in again.")
    }
    #expect(server.acceptedCount == 0)
  }

  static let fieldNameNotAToken = TransportContract(
    name: "a reply with a field name that is not a token is a bad reply, not a crash"
  ) { make, _ in
    // `HTTPFields` cannot hold such a name. The curl adapter refuses the head it received
    // (`reply_field_name_invalid`, Tests/CurlTests); URLSession's own parser refuses it first.
    let transport = make(.satisfied)
    for name in ["Bad Name", "X(y)", "Caf\u{E9}"] {
      let server = try LoopbackServer(
        .raw(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(name): x\r\n"
            + "Content-Length: 2\r\nConnection: close\r\n\r\n{}"))
      defer { server.stop() }
      let error = try await failure(of: transport, HTTPRequest(method: .get, url: server.url))
      #expect(error.kind == .invalidResponse, "\(name): \(error)")
      #expect(error.mayHaveReachedServer)
    }
    #expect(try await healthStatus(through: transport) == 200)
  }

  /// What a transport did with a 1 GiB gzip bomb, run in a process of its own
  /// (`courier-transport-probe`, built beside the tests) so that what the rest of the suite does
  /// meanwhile in the test process cannot count against it.
  public struct GzipBombOutcome: Sendable, CustomStringConvertible {
    /// The probe's first line: `error KIND UNDERLYING` or `response STATUS BYTES`.
    public var answer: String
    /// Whether the client closed the connection (a transfer that went on inflating after the
    /// answer would still be counted in `peakBytes`).
    public var closed: Bool
    /// The probe process's peak resident size (`VmHWM`), measured after the close.
    public var peakBytes: Int
    /// The probe's ending and outputs.
    public var probe: ChildProcess.Result

    /// Whether the answer is the response-size refusal at the default 64 MiB limit.
    public var refusedAtLimit: Bool {
      answer.hasPrefix("error invalidResponse ") && answer.contains("over \(64 << 20) bytes")
    }

    /// The outcome in one line, for a failure message.
    public var description: String {
      "answer: \(answer); closed: \(closed); peak: \(peakBytes >> 20) MiB; probe: \(probe)"
    }
  }

  /// Sends one GET for a 1 GiB gzip bomb through the adapter the probe names, in the probe's
  /// process. Not part of `all`: the suites assert on the outcome.
  /// - Parameter adapter: the probe's name for the adapter (`curl`, `urlsession`), used with
  ///   its default response limit.
  /// - Returns: what the probe answered and measured.
  /// - Throws: when the probe is missing, cannot start or does not report its peak.
  public static func gzipBomb(_ adapter: String) async throws -> GzipBombOutcome {
    let server = try LoopbackServer(.bytes(GzipBomb.response(mebibytes: 1024)))
    defer { server.stop() }
    let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("courier-transport-probe")
    try #require(
      FileManager.default.isExecutableFile(atPath: probe.path), "no probe at \(probe.path)")
    let go = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-probe-go-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: go) }
    async let ran = ChildProcess.run([
      probe.path, "get", adapter, server.url.absoluteString, go.path,
    ])
    let closed = await GzipBomb.wait(atMost: .seconds(120)) {
      server.acceptedCount == 1 && server.openConnectionCount == 0
    }
    _ = FileManager.default.createFile(atPath: go.path, contents: nil)
    let result = try await ran
    try #require(result.succeeded, "\(result)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    let peak = lines.last.flatMap { $0.hasPrefix("peak ") ? Int($0.dropFirst(5)) : nil }
    return GzipBombOutcome(
      answer: lines.first ?? "", closed: closed, peakBytes: try #require(peak, "\(result)"),
      probe: result)
  }
}
