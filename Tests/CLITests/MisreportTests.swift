import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What `courier` said that was not what happened (issue 24, "Misreports"), one test each: each
/// failed before its fix.
@Suite("Misreports: courier says what happened", .serialized, .sharedBackend)
struct MisreportTests {
  let cli = CLIFixture("courier-misreport", globalFlags: ["--max-attempts", "1", "--timeout", "5"])

  func article(_ run: CLIRun) -> [String: Any]? {
    (run.lines.last?["articles"] as? [[String: Any]])?.first
  }

  /// Two writes queued with no network; returns the data folder.
  func queuedClient() async throws -> URL {
    let dir = try cli.temporaryDirectory()
    for title in ["First", "Second"] {
      let add = await cli.run(
        CLIFixture.deadURL, ["articles", "add", "--title", title], dataDir: dir)
      try #require(add.code == 0, "\(add.output.stderr)")
    }
    return dir
  }

  func expectPending(_ dir: URL, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation)
    async throws
  {
    let outbox = try await cli.outbox(CLIFixture.deadURL, dataDir: dir)
    #expect(outbox["pending"] as? Int == count, "\(outbox)", sourceLocation: sourceLocation)
    #expect(outbox["rejected"] as? Int == 0, "\(outbox)", sourceLocation: sourceLocation)
  }

  @Test("serverWins: an edit the server's version replaced is not reported as sent")
  func serverWinsReplacedEdit() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let mine = try await cli.client(url)
    let theirs = try await cli.client(url)
    defer { CLIFixture.remove(mine, theirs) }
    let added = await cli.run(url, ["articles", "add", "--title", "Original"], dataDir: mine)
    try #require(added.code == 0, "\(added.output.stderr)")
    let id = try #require(
      article(await cli.run(url, ["articles", "list", "--json"], dataDir: theirs))?["id"]
        as? String)
    let edited = await cli.run(url, ["articles", "edit", id, "--title", "Theirs"], dataDir: theirs)
    try #require(edited.code == 0, "\(edited.output.stderr)")

    // This copy is still at v1: its edit meets the server's v2, and serverWins keeps that.
    let serverWins = ["--conflict-policy", "serverWins"]
    let human = await cli.run(
      url, serverWins + ["articles", "edit", id, "--title", "Mine"], dataDir: mine)
    #expect(human.code == 0, "\(human.output.stderr)")
    #expect(!human.output.stdout.contains("Sent: the server has it."), "\(human.output.stdout)")
    #expect(
      human.output.stdout.contains("Not sent: the server had a newer version (v2)"),
      "\(human.output.stdout)")
    #expect(human.output.stdout.contains("this change was dropped"))

    // The same through --json, on a second round (the copy is now at v2, the server at v3).
    let again = await cli.run(
      url, ["articles", "edit", id, "--title", "Theirs 2"], dataDir: theirs)
    try #require(again.code == 0)
    let json = await cli.run(
      url, serverWins + ["--json", "articles", "edit", id, "--title", "Mine 2"], dataDir: mine)
    let line = try #require(json.lines.first, "\(json.output.stdout)")
    #expect(line["status"] as? String == "dropped", "\(line)")
    #expect((line["dropped"] as? [String: Any])?["reason"] as? String == "server_wins")
    #expect(line["version"] as? Int == 3)
    let server = try #require(
      try await CLIFixture.articles(backend).first { $0["id"] as? String == id })
    #expect(server["title"] as? String == "Theirs 2")
  }

  @Test("a direct upload behind a portal does not say the change is kept and will be sent")
  func directUploadBehindPortal() async throws {
    let dir = try cli.temporaryDirectory()
    defer { CLIFixture.remove(dir) }
    let file = dir.appendingPathComponent("notes.txt")
    try Data("not an image\n".utf8).write(to: file)
    let portal = try HostileMode.portal200.start()
    defer { portal.stop() }
    let upload = await cli.run(portal.url.absoluteString, ["upload", file.path], dataDir: dir)
    #expect(upload.code == 69, "\(upload.output.stderr)")
    #expect(upload.output.stderr.contains("not your server"), "\(upload.output.stderr)")
    #expect(!upload.output.stderr.contains("will be sent"), "\(upload.output.stderr)")
    #expect(upload.output.stderr.contains("nothing is kept to send later"))
    let json = await cli.run(
      portal.url.absoluteString, ["--json", "upload", file.path], dataDir: dir)
    let message = try #require(json.lines.last?["message"] as? String, "\(json.output.stdout)")
    #expect(!message.contains("will be sent"), "\(message)")
    // Nothing was queued, as the message now says.
    try await expectPending(dir, 0)
    // Offline, the same: a queued write's message is kept for queued writes.
    let offline = await cli.run(CLIFixture.deadURL, ["upload", file.path], dataDir: dir)
    #expect(!offline.output.stderr.contains("will be sent"), "\(offline.output.stderr)")
  }

  @Test("a status outside 100–599 is a bad reply (76), not a refusal of every queued write")
  func statusOutOfRange() async throws {
    for status in ["600 Beyond", "099 Below"] {
      let dir = try await queuedClient()
      defer { CLIFixture.remove(dir) }
      // The API's error body: at a status HTTP has, it would be a refusal.
      let body = #"{"code":"bad_request","message":"nope!"}"#
      let server = try LoopbackServer(
        .raw(
          "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body))
      defer { server.stop() }
      let sync = await cli.run(server.url.absoluteString, ["--json", "sync"], dataDir: dir)
      #expect(sync.code == 76, "\(status): \(sync.output.stdout) \(sync.output.stderr)")
      #expect(sync.lines.first?["rejected"] as? Int == 0, "\(status): \(sync.output.stdout)")
      try await expectPending(dir, 2)
    }
  }

  @Test("an unparseable 200 that says it is JSON is a bad reply (76); a page is a login page (69)")
  func unparseableReplies() async throws {
    let cases: [(type: String, body: String, exit: Int32, says: String)] = [
      ("application/json", #"{"id":"x","title":"#, 76, "couldn't be understood"),
      ("application/problem+json; charset=utf-8", "{{", 76, "couldn't be understood"),
      ("text/html", "<html><body>Log in to the Wi-Fi</body></html>", 69, "not your server"),
    ]
    for reply in cases {
      let dir = try await queuedClient()
      defer { CLIFixture.remove(dir) }
      let server = try LoopbackServer(
        .raw(
          "HTTP/1.1 200 OK\r\nContent-Type: \(reply.type)\r\n"
            + "Content-Length: \(reply.body.utf8.count)\r\nConnection: close\r\n\r\n" + reply.body))
      defer { server.stop() }
      let url = server.url.absoluteString
      let sync = await cli.run(url, ["sync"], dataDir: dir)
      #expect(sync.code == reply.exit, "\(reply.type): \(sync.output.stderr)")
      #expect(sync.output.stderr.contains(reply.says), "\(reply.type): \(sync.output.stderr)")
      try await expectPending(dir, 2)
      // A list refresh tells them apart the same way; the cached list is kept.
      let list = await cli.run(url, ["articles", "list"], dataDir: dir)
      #expect(list.code == reply.exit, "\(reply.type): \(list.output.stderr)")
      #expect(list.output.stderr.contains(reply.says), "\(reply.type): \(list.output.stderr)")
    }
  }

  @Test("SIGTERM during an upload exits 143, SIGINT 130 (128 + the signal)")
  func signalsDuringUpload() async throws {
    for (signal, code) in [(SIGTERM, Int32(143)), (SIGINT, Int32(130))] {
      let dir = try cli.temporaryDirectory()
      defer { CLIFixture.remove(dir) }
      // Text, so that the server can read the request's head out of what arrives with it.
      let file = dir.appendingPathComponent("notes.txt")
      try Data(String(repeating: "a line of text\n", count: 200).utf8).write(to: file)
      // The server reads the request and never answers: the upload is under way until killed.
      let server = try LoopbackServer(.hang)
      defer { server.stop() }
      let upload = try cli.process(
        server.url.absoluteString, ["upload", file.path, "--no-compress"], dataDir: dir,
        globalFlags: ["--max-attempts", "1", "--timeout", "600"])
      try upload.run()
      defer { if upload.isRunning { kill(upload.processIdentifier, SIGKILL) } }
      let deadline = ContinuousClock.now + .seconds(60)
      while server.requestHeads.isEmpty {
        try #require(ContinuousClock.now < deadline, "the upload never reached the server")
        try await Task.sleep(for: .milliseconds(20))
      }
      kill(upload.processIdentifier, signal)
      try #require(await upload.exited(), "signal \(signal) did not end the upload")
      #expect(upload.terminationReason == .exit, "signal \(signal) killed it uncaught")
      #expect(upload.terminationStatus == code, "signal \(signal)")
    }
  }

  @Test("COURIER_BASE_URL set but empty is bad configuration (78), not an unreachable server")
  func emptyBaseURL() async throws {
    let dir = try cli.temporaryDirectory()
    defer { CLIFixture.remove(dir) }
    let binary = try InProcessCLI.builtCourier()
    let environment = cli.processEnvironment(dataDir: dir, ["COURIER_BASE_URL": ""])
    let get = try await ChildProcess.run(
      [binary.path, "--data-dir", dir.path, "get", "/articles"], environment: environment)
    #expect(get.status == 78, "\(get)")
    #expect(get.stderr.contains("COURIER_BASE_URL"), "\(get)")
    #expect(get.stderr.contains("is set but empty"), "\(get)")
    #expect(!get.stderr.contains("can't be reached"), "\(get)")
    // A --base-url on the line still wins.
    let flag = try await ChildProcess.run(
      [binary.path, "--data-dir", dir.path, "--base-url", CLIFixture.deadURL, "status"],
      environment: environment)
    #expect(flag.status == 0, "\(flag)")
  }

  @Test("an empty or over-200-character title is refused before it is queued")
  func titleCheckedBeforeQueueing() async throws {
    let dir = try cli.temporaryDirectory()
    defer { CLIFixture.remove(dir) }
    let long = String(repeating: "é", count: 201)
    for title in ["", "   ", long] {
      let add = await cli.run(
        CLIFixture.deadURL, ["--json", "articles", "add", "--title", title], dataDir: dir)
      #expect(add.code == 65, "\(title.count): \(add.output.stdout)")
      let line = try #require(add.lines.first, "\(add.output.stdout) \(add.output.stderr)")
      #expect(line["code"] as? String == "invalid_record", "\(line)")
      #expect(line["field"] as? String == "title", "\(line)")
    }
    let human = await cli.run(
      CLIFixture.deadURL, ["articles", "add", "--title", long], dataDir: dir)
    #expect(
      human.output.stderr.contains("at most 200 characters (this one has 201)"),
      "\(human.output.stderr)")
    try await expectPending(dir, 0)
    // 200 is the contract's limit, and is queued; an edit to an empty title is refused too.
    let limit = await cli.run(
      CLIFixture.deadURL,
      ["--json", "articles", "add", "--title", String(repeating: "é", count: 200)], dataDir: dir)
    #expect(limit.code == 0, "\(limit.output.stderr)")
    let id = try #require(limit.lines.first?["id"] as? String)
    let emptied = await cli.run(
      CLIFixture.deadURL, ["articles", "edit", id, "--title", ""], dataDir: dir)
    #expect(emptied.code == 65, "\(emptied.output.stderr)")
    try await expectPending(dir, 1)
  }

  @Test("a declared collection's lengths are checked before a write is queued")
  func declaredLengths() async throws {
    let notes = CLIFixture(
      "courier-misreport-notes", globalFlags: ["--max-attempts", "1"],
      config: #"{"collections":{"notes":{"fields":{"text":"string"},"lengths":{"text":[1,5]}}}}"#)
    let dir = try notes.temporaryDirectory()
    defer { CLIFixture.remove(dir) }
    let folder = dir.appendingPathComponent("cfg/courier")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data((notes.config ?? "").utf8).write(to: folder.appendingPathComponent("config.json"))
    let long = await notes.run(
      CLIFixture.deadURL, ["records", "notes", "add", "--field", "text=123456"], dataDir: dir)
    // `courier records` reports a write its declaration refuses as a usage error, as ever.
    #expect(long.code == 64, "\(long.output.stderr)")
    #expect(long.output.stderr.contains("at most 5 characters"), "\(long.output.stderr)")
    let fits = await notes.run(
      CLIFixture.deadURL, ["records", "notes", "add", "--field", "text=12345"], dataDir: dir)
    #expect(fits.code == 0, "\(fits.output.stderr)")
    let outbox = try await notes.outbox(CLIFixture.deadURL, dataDir: dir)
    #expect(outbox["pending"] as? Int == 1)
  }
}
