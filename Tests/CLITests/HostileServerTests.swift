import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierTestSupport
import Foundation
import Testing

/// The real sync, upload and get paths of `courier` against a network that answers wrongly in
/// every way the hostile server knows: nothing queued is lost or marked sent, nothing hangs,
/// no page reaches the screen, and the exit code says what happened (issue 10, decision 0414).
@Suite("Hostile servers through sync, upload and get", .serialized)
struct HostileServerTests {
  /// One attempt, a 2 s timeout, and a session token, so requests reach the hostile server
  /// with credentials as a user's would.
  let cli = CLIFixture(
    "courier-hostile", globalFlags: ["--max-attempts", "1", "--timeout", "2"],
    environment: ["COURIER_TOKEN": HostileMode.token])

  /// The exit codes each mode may end with (sysexits, README).
  static func expectedExits(_ mode: HostileMode) -> Set<Int32> {
    switch mode {
    // A reply whose JSON is not the record, however it was framed (trailers, no reason phrase).
    case .portal200, .portal302, .portal511, .proxy403, .jsonNotRecord, .chunkedTrailers,
      .bareStatusLine:
      [69]
    // JSON cut short by its Content-Length: a bad reply from something speaking the API (76),
    // not a login page (decision 2423).
    case .lyingLength: [76]
    // A body cut short of its length: a truncated reply, not a lost connection (decision 2436).
    case .truncatedBody: [76]
    // A status line or lengths that are not HTTP (decision 2434).
    case .badStatusLine, .conflictingLength: [76]
    case .notHTTP, .gzipBomb, .badFieldName, .manyFields: [76]
    // libcurl reports an oversized header section as a receive error (transient).
    case .hugeHeaders: [75, 76]
    case .slowHeaders, .endless429: [75]
    case .endless401: [77]
    // The server's own refusal, which repeats the request: refused (65), the token never shown.
    case .tokenEcho: [65]
    // A list where a record was due: not the server's answer to the write (69).
    case .terminalInjection: [69]
    // JSON nested past what Courier reads: a bad reply, never a page (decision 2428).
    case .tooDeep: [76]
    }
  }

  /// The code and the sentence `get` reports for a reply framed wrongly (decisions 2434, 2436).
  static func framingFailure(_ mode: HostileMode) -> (code: String, message: String)? {
    let unreadable = "The server sent a reply that couldn't be understood."
    switch mode {
    case .badStatusLine: return ("reply_status_line_invalid", unreadable)
    case .conflictingLength: return ("reply_length_conflict", unreadable)
    case .truncatedBody:
      return ("reply_truncated", "The server's reply was cut short before its end.")
    default: return nil
    }
  }

  /// What a terminal could act on: ESC, BEL, CR, the C1 CSI and the bidi override.
  static let terminalControls: [Unicode.Scalar] = ["\u{1B}", "\u{07}", "\r", "\u{9B}", "\u{202E}"]

  /// Nothing the command printed holds the token or a raw terminal control, and neither does
  /// any file of the data folder (`courier.sqlite`, its log, the journal), nor `courier
  /// outbox` as text and as `--json` (decisions 2420, 2421).
  func expectClean(
    _ run: CLIRun, dir: URL, _ mode: HostileMode, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    var printed = [run.output.stdout, run.output.stderr]
    for arguments in [["outbox"], ["outbox", "--json"]] {
      let outbox = await cli.run(CLIFixture.deadURL, arguments, dataDir: dir)
      printed += [outbox.output.stdout, outbox.output.stderr]
    }
    for text in printed {
      #expect(
        !text.contains(HostileMode.token), "\(mode) printed the token: \(text)",
        sourceLocation: sourceLocation)
      #expect(
        !text.unicodeScalars.contains(where: Self.terminalControls.contains),
        "\(mode) printed a raw terminal control: \(text.debugDescription)",
        sourceLocation: sourceLocation)
    }
    let files = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)
    while let file = files?.nextObject() as? URL {
      guard let bytes = try? Data(contentsOf: file) else { continue }
      #expect(
        bytes.range(of: Data(HostileMode.token.utf8)) == nil,
        "\(mode) stored the token in \(file.lastPathComponent)", sourceLocation: sourceLocation)
    }
  }

  func expectNoPage(
    _ run: CLIRun, _ mode: HostileMode, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    for text in [run.output.stdout, run.output.stderr] {
      #expect(
        !text.lowercased().contains("<html"), "\(mode) put a page on screen: \(text)",
        sourceLocation: sourceLocation)
      #expect(!text.contains("Please log in to the network"), sourceLocation: sourceLocation)
    }
  }

  /// Queues two writes with no network, then returns the data folder.
  func queuedClient() async throws -> URL {
    let dir = try cli.temporaryDirectory()
    for title in ["First", "Second"] {
      let add = await cli.run(
        CLIFixture.deadURL, ["articles", "add", "--title", title], dataDir: dir)
      #expect(add.code == 0, "\(add.output.stderr)")
    }
    return dir
  }

  func expectKept(
    _ dir: URL, _ mode: HostileMode, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let outbox = await cli.run(CLIFixture.deadURL, ["outbox", "--json"], dataDir: dir)
    let object = try #require(outbox.lines.first, sourceLocation: sourceLocation)
    #expect(
      object["pending"] as? Int == 2, "\(mode): \(outbox.output.stdout)",
      sourceLocation: sourceLocation)
    #expect(object["rejected"] as? Int == 0, "\(mode)", sourceLocation: sourceLocation)
    let list = await cli.run(
      CLIFixture.deadURL, ["articles", "list", "--offline", "--json"], dataDir: dir)
    let articles = try #require(
      list.lines.first?["articles"] as? [[String: Any]], sourceLocation: sourceLocation)
    #expect(
      Set(articles.compactMap { $0["title"] as? String }) == ["First", "Second"],
      sourceLocation: sourceLocation)
  }

  @Test(
    "sync: every write stays pending, with the right exit code", arguments: HostileMode.allCases)
  func sync(_ mode: HostileMode) async throws {
    let dir = try await queuedClient()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try mode.start()
    defer { server.stop() }
    let sync = await cli.run(server.url.absoluteString, ["sync", "--json"], dataDir: dir)
    #expect(
      Self.expectedExits(mode).contains(sync.code),
      "\(mode): exit \(sync.code) \(sync.output.stdout) \(sync.output.stderr)")
    #expect(server.acceptedCount >= 1, "\(mode): the request never reached the hostile server")
    let report = try #require(sync.lines.first)
    #expect(report["sent"] as? Int == 0)
    if mode.refusesWrites {
      // The server's own refusal is recorded against each write, its message without the token.
      #expect(report["rejected"] as? Int == 2, "\(mode): \(sync.output.stdout)")
      let text = await cli.run(CLIFixture.deadURL, ["outbox"], dataDir: dir)
      #expect(text.output.stdout.contains("Bearer \(SecretRedaction.mark)"), "\(text.output)")
    } else {
      #expect(report["pending"] as? Int == 2)
      try await expectKept(dir, mode)
    }
    expectNoPage(sync, mode)
    let human = await cli.run(server.url.absoluteString, ["sync"], dataDir: dir)
    await expectClean(human, dir: dir, mode)
    await expectClean(sync, dir: dir, mode)
  }

  /// Decision 2401: a write past its bound of 3 sends is parked only when the server answers a
  /// read of its record; every hostile network answers that read too, wrongly, so nothing is
  /// parked and nothing behind the write leaves.
  @Test(
    "sync past a write's bound: the probe meets the same network, nothing is parked",
    arguments: HostileMode.allCases)
  func nothingParked(_ mode: HostileMode) async throws {
    let dir = try await queuedClient()
    defer { try? FileManager.default.removeItem(at: dir) }
    // One more offline try: the first write has been sent 3 times.
    _ = await cli.run(CLIFixture.deadURL, ["sync"], dataDir: dir)
    let server = try mode.start()
    defer { server.stop() }
    let sync = await cli.run(server.url.absoluteString, ["sync", "--json"], dataDir: dir)
    #expect(
      Self.expectedExits(mode).contains(sync.code),
      "\(mode): exit \(sync.code) \(sync.output.stdout) \(sync.output.stderr)")
    let report = try #require(sync.lines.first)
    #expect(report["parked"] as? Int == 0 && report["sent"] as? Int == 0, "\(mode): \(report)")
    let outbox = try await cli.outbox(CLIFixture.deadURL, dataDir: dir)
    // A server that refuses the writes (its own error body) has them refused, not parked.
    let pending = mode.refusesWrites ? 0 : 2
    #expect(outbox["parked"] as? Int == 0 && outbox["pending"] as? Int == pending, "\(mode)")
    expectNoPage(sync, mode)
  }

  @Test("upload: never reported as done, never a page on screen", arguments: HostileMode.allCases)
  func upload(_ mode: HostileMode) async throws {
    let dir = try InProcessCLI.temporaryDirectory("courier-hostile-upload")
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("notes.txt")
    try Data("not an image, sent as is\n".utf8).write(to: file)
    let server = try mode.start()
    defer { server.stop() }
    let upload = await cli.run(server.url.absoluteString, ["upload", file.path], dataDir: dir)
    #expect(
      Self.expectedExits(mode).contains(upload.code),
      "\(mode): exit \(upload.code) \(upload.output.stderr)")
    expectNoPage(upload, mode)
    let json = await cli.run(
      server.url.absoluteString, ["upload", file.path, "--json"], dataDir: dir)
    #expect(json.code == upload.code)
    #expect(json.lines.last?["status"] as? String == "failed", "\(mode): \(json.output.stdout)")
    await expectClean(upload, dir: dir, mode)
    await expectClean(json, dir: dir, mode)
  }

  @Test("get: a page is never printed as the server's reply", arguments: HostileMode.allCases)
  func get(_ mode: HostileMode) async throws {
    let dir = try InProcessCLI.temporaryDirectory("courier-hostile-get")
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try mode.start()
    defer { server.stop() }
    let get = await cli.run(server.url.absoluteString, ["get", "/articles"], dataDir: dir)
    // A 2xx `{"ok":true}` or `{}` is a valid JSON reply to a GET: printed, exit 0.
    let printed: Set<HostileMode> = [
      .jsonNotRecord, .terminalInjection, .chunkedTrailers, .bareStatusLine,
    ]
    let expected: Set<Int32> = printed.contains(mode) ? [0] : Self.expectedExits(mode)
    #expect(expected.contains(get.code), "\(mode): exit \(get.code) \(get.output.stderr)")
    expectNoPage(get, mode)
    if let (code, message) = Self.framingFailure(mode) {
      // The sentence for a person, and the reason by its code, never libcurl's words.
      #expect(get.output.stderr == "courier: \(message)\n", "\(mode)")
      let json = await cli.run(
        server.url.absoluteString, ["get", "/articles", "--json"], dataDir: dir)
      #expect(json.lines.last?["code"] as? String == code, "\(mode): \(json.output.stdout)")
    }
    if mode == .chunkedTrailers || mode == .bareStatusLine {
      #expect(get.output.stdout.contains(#""ok""#), "\(mode): \(get.output.stdout)")
      #expect(!get.output.stdout.contains("abc"), "\(mode): \(get.output.stdout)")
    }
    // Into a pipe the body is data, exact; it holds the controls only as JSON escapes, and
    // --json writes those a terminal acts on as \u escapes too (the same JSON value).
    await expectClean(get, dir: dir, mode)
    let json = await cli.run(
      server.url.absoluteString, ["get", "/articles", "--json"], dataDir: dir)
    await expectClean(json, dir: dir, mode)
  }

  @Test(
    "articles list: no raw terminal control, no token, whatever the network answers",
    arguments: HostileMode.allCases)
  func list(_ mode: HostileMode) async throws {
    let dir = try await queuedClient()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try mode.start()
    defer { server.stop() }
    let list = await cli.run(server.url.absoluteString, ["articles", "list"], dataDir: dir)
    expectNoPage(list, mode)
    await expectClean(list, dir: dir, mode)
    if mode == .terminalInjection {
      // The hostile article is listed, every control shown as an escape.
      #expect(list.code == 0, "\(list.output.stderr)")
      #expect(list.output.stdout.contains(#"  evil\e[2J  v1  \e]0;owned\x07Safe\rForged "#))
      #expect(list.output.stdout.contains(#"\u{202E}txt.exe\x9B31m"#), "\(list.output.stdout)")
      // --json stays exact: the title is the server's, JSON-escaped.
      let json = await cli.run(
        server.url.absoluteString, ["articles", "list", "--json", "--offline"], dataDir: dir)
      let articles = try #require(json.lines.first?["articles"] as? [[String: Any]])
      let titles = articles.compactMap { $0["title"] as? String }
      #expect(titles.contains("\u{1B}]0;owned\u{07}Safe\rForged \u{202E}txt.exe\u{9B}31m"))
    }
    if mode == .tooDeep {
      // Refused by name, a bad reply; the queued articles are listed and kept.
      #expect(list.code == 76, "\(list.output.stderr)")
      #expect(
        list.output.stderr.contains(
          "articles record “\(HostileMode.deepID)” holds the field “\(HostileMode.deepField)”"),
        "\(list.output.stderr)")
      #expect(!list.output.stderr.contains("login page"), "\(list.output.stderr)")
      let json = await cli.run(
        server.url.absoluteString, ["articles", "list", "--json"], dataDir: dir)
      #expect(json.code == 76)
      let error = json.lines.last?["error"] as? [String: Any]
      #expect(error?["code"] as? String == "record_too_deep", "\(json.output.stdout)")
      #expect(error?["field"] as? String == HostileMode.deepField)
      try await expectKept(dir, mode)
    }
  }

  /// Decision 2430: an impostor with a certificate the trusted CA issued for the same names
  /// (a compromised or coerced authority, an inspecting proxy with its CA installed) passes
  /// verification; only the pin tells it apart. It gets one connection and no byte of a
  /// request, the writes stay pending, and the refusal is not retried.
  @Test("a certificate of the trusted CA with an unpinned key: one connection, nothing sent, 69")
  func unpinnedKey() async throws {
    let pki = try TestPKI.shared()
    let dir = try await queuedClient()
    defer { try? FileManager.default.removeItem(at: dir) }
    let impostor = try TLSTestServer(certificate: pki.other, key: pki.otherKey)
    defer { impostor.stop() }
    let url = impostor.url("").absoluteString
    let pinned = ["COURIER_CA_BUNDLE": pki.ca.path, "COURIER_PINNED_PUBLIC_KEYS": pki.serverPin]
    // Four attempts allowed: a transient failure would be tried again.
    let sync = await cli.run(
      url, ["sync", "--json", "--max-attempts", "4"], dataDir: dir, environment: pinned)
    #expect(sync.code == 69, "\(sync.output.stdout) \(sync.output.stderr)")
    #expect(impostor.connections == 1)
    let report = try #require(sync.lines.first)
    #expect(report["sent"] as? Int == 0 && report["pending"] as? Int == 2, "\(report)")
    let human = await cli.run(
      url, ["sync", "--max-attempts", "4"], dataDir: dir, environment: pinned)
    #expect(human.code == 69)
    #expect(human.output.stderr.contains("pinned_public_keys"), "\(human.output.stderr)")
    #expect(impostor.connections == 2)
    let outbox = try await cli.outbox(CLIFixture.deadURL, dataDir: dir)
    #expect(outbox["pending"] as? Int == 2 && outbox["rejected"] as? Int == 0, "\(outbox)")
    // No token and no raw control printed or stored (the mode only names a failure).
    await expectClean(human, dir: dir, .portal200)
  }

  /// Decision 2436: a reply cut short of its length is a truncated reply, not a lost
  /// connection. Under the default retry policy a write it answered is not sent again in the
  /// same sync: it stays pending and unproven, and the next sync sends it with the same
  /// Idempotency-Key. A GET is asked for once more.
  @Test("a reply cut short: the write is sent once per sync with its key, a GET twice")
  func truncatedNotRetried() async throws {
    let dir = try await queuedClient()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try HostileMode.truncatedBody.start()
    defer { server.stop() }
    let url = server.url.absoluteString
    let environment = ["COURIER_TOKEN": HostileMode.token]
    let flags = ["--timeout", "2"]
    for round in 1...2 {
      let sync = await InProcessCLI.run(
        url, ["sync", "--json"], dataDir: dir, environment: environment, globalFlags: flags)
      #expect(sync.code == 76, "round \(round): \(sync.output.stdout) \(sync.output.stderr)")
      #expect(sync.lines.first?["pending"] as? Int == 2, "\(sync.output.stdout)")
      #expect(Self.writes(server).count == round, "\(server.requestHeads)")
    }
    let keys = Self.writes(server).map { head in
      head.split(separator: "\r\n").first { $0.hasPrefix("idempotency-key:") }
    }
    #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "\(server.requestHeads)")
    try await expectKept(dir, .truncatedBody)
    let before = server.requestHeads.count
    let get = await InProcessCLI.run(
      url, ["get", "/articles"], dataDir: dir, environment: environment, globalFlags: flags)
    #expect(get.code == 76, "\(get.output.stderr)")
    #expect(server.requestHeads.count - before == 2, "\(server.requestHeads)")
  }

  /// The heads of the writes a server received, in order.
  static func writes(_ server: LoopbackServer) -> [String] {
    server.requestHeads.filter { $0.hasPrefix("put ") || $0.hasPrefix("post ") }
  }

  @Test("after a captive portal, the real server gets every write exactly once")
  func portalThenServer() async throws {
    let backend = try await ReferenceBackend()
    defer { backend.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-hostile-then-real")
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let login = await InProcessCLI.run(
      url, ["login", "--username", "alice", "--password-stdin"], dataDir: dir, input: "secret\n")
    #expect(login.code == 0, "\(login.output.stderr)")
    let plain: [String] = ["--max-attempts", "1"]
    for title in ["One", "Two", "Three"] {
      let add = await InProcessCLI.run(
        CLIFixture.deadURL, ["articles", "add", "--title", title], dataDir: dir, globalFlags: plain)
      #expect(add.code == 0)
    }
    for mode in [HostileMode.portal200, .portal302] {
      let portal = try mode.start()
      // The default retry policy: a portal's page is not repeated within the sync (it will
      // not go away in seconds), and the replay stops at the first write. That write is past
      // its bound of 3 sends (the offline adds each tried it), so its record is read once to
      // see whether the server answers (decision 2401): the portal answers that too, and
      // nothing is parked. A pass stopped by a reply that is not the server's asks the portal
      // probe before it ends (decision 2612): one `GET /health`, which the portal answers too.
      let sync = await InProcessCLI.run(portal.url.absoluteString, ["sync"], dataDir: dir)
      portal.stop()
      #expect(
        portal.requestHeads.map { $0.prefix(4) } == ["put ", "get ", "get "],
        "\(portal.requestHeads)")
      #expect(portal.requestHeads.last?.hasPrefix("get /health ") == true, "\(portal.requestHeads)")
      #expect(sync.code == 69, "\(mode): \(sync.output.stderr)")
      #expect(sync.output.stderr.contains("not your server"), "\(sync.output.stderr)")
      #expect(
        sync.output.stdout.contains("Sent 0"),
        "\(sync.output.stdout)")
    }
    let real = await InProcessCLI.run(url, ["sync", "--json"], dataDir: dir, globalFlags: plain)
    #expect(real.code == 0, "\(real.output.stderr)")
    #expect(real.lines.first?["sent"] as? Int == 3)
    #expect(real.lines.first?["pending"] as? Int == 0)
    let puts = try await backend.log().filter {
      ($0["method"] as? String) == "PUT" && (($0["path"] as? String) ?? "").hasPrefix("/articles/")
    }
    #expect(puts.count == 3)
    #expect(Set(puts.compactMap { $0["path"] as? String }).count == 3)
    #expect(puts.allSatisfy { $0["status"] as? Int == 201 })
  }
}
