import CourierCLI
import CourierCLITestSupport
import CourierPorts
import CourierTestSupport
import Foundation
import Logging
import Testing

/// `courier --verbose` as a log handler (decision 2203): the lines it has always printed, and
/// only those.
@Suite("VerboseLogHandler")
struct VerboseLogHandlerTests {
  @Test("writes the entries of a call, escaped, whatever their level; drops the others")
  func picksTheCallsEntries() {
    let output = CapturedOutput()
    var logger = VerboseLogHandler.logger(writingTo: output)
    logger.debug("Replay pass ended")
    logger.debug("Network path changed", metadata: [CourierLogKey.pathStatus: "satisfied"])
    logger.trace("→ GET http://h/x", metadata: [CourierLogKey.requestID: "0123456789abcdef"])
    logger[metadataKey: CourierLogKey.requestID] = "fedcba9876543210"
    logger.info("server busy (503)\r\nInjected: \u{1B}[2J")
    #expect(
      output.stderr
        == "courier: → GET http://h/x\ncourier: server busy (503)\\r\\nInjected: \\e[2J\n")
  }

  @Test("get -v with two 500s: each exchange and each decision, line for line, and nothing else")
  func lineForLine() async throws {
    let dir = try InProcessCLI.temporaryDirectory("courier-verbose")
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 500 Oops\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
          + "Connection: close\r\n\r\n{}"))
    defer { server.stop() }
    let result = await InProcessCLI.run(
      server.url.absoluteString, ["get", "/articles", "--json"], dataDir: dir,
      environment: ["COURIER_TOKEN": "s3cr3t-token", "COURIER_RETRY_BASE_DELAY_MS": "1"],
      globalFlags: ["-v", "--max-attempts", "2"])
    #expect(result.code == 75)
    let lines = result.output.stderr.split(separator: "\n").map {
      String($0).replacing(/in \d+ ms/, with: "in N ms")
    }
    let request =
      "courier: → GET \(server.url.absoluteString)/articles "
      + "[Accept: application/json; Authorization: <redacted>]"
    #expect(
      lines == [
        request, "courier: ← 500 GET /articles in N ms",
        "courier: server error (500), retrying in 0.0 s, attempt 2 of 2",
        request, "courier: ← 500 GET /articles in N ms",
        "courier: giving up after 2 attempts (attemptsExhausted): server error (500)",
      ], "\(result.output.stderr)")
  }

  @Test("sync -v with nothing to send prints nothing: a replay is not a call")
  func quietReplay() async throws {
    let dir = try InProcessCLI.temporaryDirectory("courier-verbose")
    defer { try? FileManager.default.removeItem(at: dir) }
    // Private already: no warning that it was made so.
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir.path)
    let result = await InProcessCLI.run(
      "http://127.0.0.1:9", ["sync"], dataDir: dir, globalFlags: ["-v"])
    #expect(result.code == 0, "\(result.output.stderr)")
    #expect(result.output.stderr.isEmpty, "\(result.output.stderr)")
  }
}
