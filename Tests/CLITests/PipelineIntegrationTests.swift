import CourierCLI
import CourierCLITestSupport
import CourierLinux
import CourierTestSupport
import Foundation
import Testing

/// The whole pipeline (CLI → config → retry → auth → transport) against the real reference
/// backend: one backend for the suite, reset before each test so state never leaks.
@Suite("Pipeline against the reference backend", .serialized, .sharedBackend)
struct PipelineIntegrationTests {
  let cli = CLIFixture("courier-cli")

  @Test("login stores a 0600 session; get succeeds; logout forgets it")
  func loginGetLogout() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }

    let denied = await cli.run(backend, ["get", "/articles", "--json"], dataDir: dir)
    #expect(denied.code == 77)
    #expect(denied.output.stdout.contains(#""kind":"unauthorized""#))
    #expect(denied.output.stdout.contains("not logged in"))

    let login = await cli.run(
      backend, ["login", "--username", "alice", "--password-stdin"], dataDir: dir, input: "secret\n"
    )
    #expect(login.code == 0, "\(login.output.stderr)")
    let session = dir.appendingPathComponent("session.json").path
    let mode =
      try FileManager.default.attributesOfItem(atPath: session)[.posixPermissions] as? NSNumber
    #expect(mode?.intValue == 0o600)

    let get = await cli.run(backend, ["get", "/articles"], dataDir: dir)
    #expect(get.code == 0, "\(get.output.stderr)")
    #expect(get.output.stdout.hasPrefix("["))

    let logout = await cli.run(backend, ["logout"], dataDir: dir)
    #expect(logout.code == 0)
    #expect(!FileManager.default.fileExists(atPath: session))
  }

  @Test("wrong password → 77 with a person's message, no raw code")
  func wrongPassword() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let result = await cli.run(
      backend, ["login", "--username", "alice", "--password", "nope"], dataDir: dir)
    #expect(result.code == 77)
    #expect(result.output.stderr.hasPrefix("courier: warning: --password on the command line"))
    #expect(result.output.stderr.hasSuffix("\ncourier: Wrong username or password.\n"))
  }

  @Test(
    "503 twice with Retry-After, then success: 3 attempts, each decision reported",
    arguments: ["curl", "urlsession"])
  func chaosRetry(transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":2,"status":503,"retry_after":1}"#)
    let start = ContinuousClock.now
    let result = await cli.run(
      backend, ["get", "/health", "--json", "--verbose", "--transport", transport], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stdout.contains(#""attempts":3"#))
    // The wait: the backoff's first draw (1–2 s, decision 2410) or Retry-After: 1 spread up to
    // 1.5 s, whichever is longer; never shorter than the server asked.
    let waits = result.output.stderr.matches(
      of: /server busy \(503\), retrying in (\d+\.\d) s, attempt 2 of 4/
    ).compactMap { Double($0.output.1) }
    #expect(
      waits.count == 1 && waits.allSatisfy { $0 >= 1.0 && $0 <= 2.0 }, "\(result.output.stderr)")
    #expect(result.output.stderr.contains("attempt 3 of 4"))
    // Retry-After: 1 was honoured twice.
    #expect(start.duration(to: .now) >= .seconds(2))
    let log = try await backend.log().filter { ($0["path"] as? String) == "/health" }
    // The launcher's own health checks come first; the last three are the command's.
    #expect(Array(log.compactMap { $0["status"] as? Int }.suffix(3)) == [503, 503, 200])
  }

  @Test("transient failure outlasting the retries → 75 and the JSON failure object")
  func exhausted() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":5,"status":502,"format":"html"}"#)
    let result = await cli.run(
      backend, ["get", "/health", "--json", "--max-attempts", "2"], dataDir: dir,
      environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])
    #expect(result.code == 75)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.output.stdout.utf8)) as? [String: Any])
    #expect(object["status"] as? String == "failed")
    #expect(object["kind"] as? String == "server")
    #expect(object["attempts"] as? Int == 2)
    #expect(!(object["message"] as? String ?? "<").contains("<"))
  }

  @Test(
    "a slow server meets the caller's deadline → 75 timed out", arguments: ["curl", "urlsession"])
  func deadline(transport: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    // The server holds the request until released: it never answers within the deadline,
    // however slow the machine (a 3 s delay against a 1 s deadline only made that likely).
    try await backend.call("POST", "/__hold", json: #"{"after":0,"method":"GET"}"#)
    let result = await cli.run(
      backend,
      [
        "get", "/health", "--json", "--timeout", "1", "--max-attempts", "1", "--transport",
        transport,
      ],
      dataDir: dir)
    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    #expect(result.code == 75)
    #expect(result.output.stdout.contains(#""kind":"timedOut""#))
  }

  @Test("a token about to expire is refreshed before the request, from its stored expiry")
  func refresh() async throws {
    let backend = try await SharedBackend.fresh()
    // 20 s: inside the client's 30 s leeway, so the stored expiry asks for a refresh at once,
    // and long enough that the refreshed token (20 s too) is still good when the request that
    // follows reaches the server on a loaded machine (1 s was not: a 401, then a second refresh).
    try await backend.call("POST", "/__config", json: #"{"token_ttl":20}"#)
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    #expect(
      await cli.run(backend, ["login", "--username", "bob", "--password", "secret"], dataDir: dir)
        .code
        == 0)
    let before = try Data(contentsOf: dir.appendingPathComponent("session.json"))
    // The 20 s token is within the 30 s leeway of its stored expiry: no 401 is needed.
    let result = await cli.run(backend, ["get", "/articles"], dataDir: dir)
    #expect(result.code == 0, "\(result.output.stderr)")
    let after = try Data(contentsOf: dir.appendingPathComponent("session.json"))
    #expect(before != after)
    let paths = try await backend.log().compactMap { entry -> String? in
      guard let path = entry["path"] as? String, let status = entry["status"] as? Int else {
        return nil
      }
      return "\(path) \(status)"
    }
    #expect(Array(paths.suffix(2)) == ["/auth/refresh 200", "/articles 200"])
    #expect(!paths.contains("/articles 401"))
  }

  @Test("connection refused → 69 and the offline/unreachable message")
  func refused() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let output = CapturedOutput()
    let runner = CommandRunner(environment: ["HOME": dir.path], output: output)
    let code = await runner.run([
      "--base-url", "http://127.0.0.1:\(freeLoopbackPort())", "get", "/health", "--max-attempts",
      "1",
    ])
    #expect(code == 69)
    #expect(output.stderr.contains("can't be reached"))
  }

  @Test("usage errors exit 64; bad config exits 78 naming the file and key")
  func usageAndConfig() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let output = CapturedOutput()
    let runner = CommandRunner(environment: ["HOME": dir.path], output: output)
    #expect(await runner.run(["frobnicate"]) == 64)
    #expect(output.stderr.contains("Unexpected argument 'frobnicate'"))
    let config = dir.appendingPathComponent("c.json")
    try Data(#"{"transport":"pigeon"}"#.utf8).write(to: config)
    #expect(await runner.run(["--config", config.path, "get", "/x"]) == 78)
    #expect(output.stderr.contains("\(config.path): \"transport\": unknown adapter"))
  }
}
