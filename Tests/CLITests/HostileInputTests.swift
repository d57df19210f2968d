import CourierCLITestSupport
import CourierCore
import CourierDomain
import CourierLinux
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import CourierCLI

/// Inputs that must never crash, hang or leak: huge numbers, files that are not files, tokens
/// that can't be headers, credentials in logs, requests to another server.
@Suite("Hostile inputs", .serialized)
struct HostileInputTests {
  func temporaryDirectory() throws -> URL { try InProcessCLI.temporaryDirectory("courier-hostile") }

  /// Runs a command in a task of its own and waits for it for at most `bound`: a command
  /// blocked in a system call fails the test instead of hanging the run (its thread is lost).
  func runBounded(
    _ baseURL: String, _ arguments: [String], dataDir: URL, globalFlags: [String] = [],
    bound: Duration = .seconds(60)
  ) async -> CLIRun? {
    let box = ResultBox()
    Task.detached {
      let run = await InProcessCLI.run(
        baseURL, arguments, dataDir: dataDir, globalFlags: globalFlags)
      box.value.withLock { $0 = run }
    }
    let finished = await GzipBomb.wait(atMost: bound) { box.value.withLock { $0 != nil } }
    if !finished { Issue.record("courier \(arguments) did not return within \(bound)") }
    return box.value.withLock { $0 }
  }

  final class ResultBox: Sendable {
    let value = Mutex<CLIRun?>(nil)
  }

  @Test("huge, negative and non-numeric --timeout and --max-attempts exit 78, never crash")
  func hugeNumbers() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    for (flag, value, key) in [
      ("--timeout", "9223372036854776", "timeout_seconds"),
      ("--timeout", "9223372036854775808", "timeout_seconds"),
      ("--timeout", "-5", "timeout_seconds"), ("--timeout", "nan", "timeout_seconds"),
      ("--max-attempts", "9223372036854775807", "max_attempts"),
      ("--max-attempts", "0", "max_attempts"),
    ] {
      let result = await InProcessCLI.run(
        "http://127.0.0.1:9", ["get", "/x"], dataDir: dir, globalFlags: [flag, value])
      #expect(result.code == 78, "\(flag) \(value): \(result.output.stderr)")
      #expect(
        result.output.stderr.hasPrefix("courier: configuration error: command line: \"\(key)\""),
        "\(result.output.stderr)")
    }
    let fromEnvironment = await InProcessCLI.run(
      "http://127.0.0.1:9", ["get", "/x"], dataDir: dir,
      environment: ["COURIER_DEADLINE": "99999999999999999999"])
    #expect(fromEnvironment.code == 78)
    #expect(fromEnvironment.output.stderr.contains("environment variable COURIER_DEADLINE"))
  }

  @Test("upload of a FIFO with no writer returns at once with 66; nothing is sent")
  func uploadFIFO() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let fifo = dir.appendingPathComponent("photo.jpg").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try #require(
      await runBounded(server.url.absoluteString, ["upload", fifo], dataDir: dir))
    #expect(result.code == 66)
    #expect(
      result.output.stderr
        == "courier: The file photo.jpg is a pipe (FIFO), not a regular file.\n")
    #expect(server.acceptedCount == 0)
  }

  @Test("upload of /dev/zero, /dev/null or a socket is refused with 66, not sent empty")
  func uploadDevices() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    for (path, why) in [
      ("/dev/zero", "zero is a device, not a regular file"),
      ("/dev/null", "null is a device, not a regular file"),
    ] {
      let result = try #require(
        await runBounded(server.url.absoluteString, ["upload", path], dataDir: dir))
      #expect(result.code == 66, "\(path)")
      #expect(result.output.stderr == "courier: The file \(why).\n")
    }
    // A symbolic link to a device is judged by what it points to.
    let link = dir.appendingPathComponent("innocent.jpg")
    try FileManager.default.createSymbolicLink(
      at: link, withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
    let linked = try #require(
      await runBounded(server.url.absoluteString, ["upload", link.path], dataDir: dir))
    #expect(linked.code == 66)
    #expect(server.acceptedCount == 0)
  }

  @Test("the multipart file part refuses a FIFO without blocking (every caller of Uploader)")
  func multipartFIFO() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let fifo = dir.appendingPathComponent("in.bin")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    do {
      _ = try MultipartPart.file("file", at: fifo)
      Issue.record("a FIFO was accepted")
    } catch let error as CourierError {
      #expect(error.kind == .fileUnavailable)
      #expect(error.userMessage.contains("in.bin"))
      #expect(error.userMessage.contains("pipe (FIFO)"))
    }
  }

  @Test("--config naming a FIFO exits 78 at once")
  func configFIFO() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let fifo = dir.appendingPathComponent("config.json").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try #require(
      await runBounded(
        "http://127.0.0.1:9", ["get", "/x"], dataDir: dir,
        globalFlags: [
          "--config", fifo,
        ]))
    #expect(result.code == 78)
    #expect(result.output.stderr.contains("is a pipe (FIFO), not a regular file"))
  }

  @Test("get with an absolute URL on another origin is refused (64) and nothing is sent")
  func otherOrigin() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let base = try LoopbackServer(.hang)
    let other = try LoopbackServer(.hang)
    defer {
      base.stop()
      other.stop()
    }
    let file = dir.appendingPathComponent("note.txt")
    try Data("hello".utf8).write(to: file)
    for arguments in [
      ["get", other.url.absoluteString + "/steal"],
      ["upload", file.path, "--to", other.url.absoluteString + "/photos"],
    ] {
      let result = await InProcessCLI.run(
        base.url.absoluteString, arguments, dataDir: dir,
        environment: ["COURIER_TOKEN": "s3cr3t-token"])
      #expect(result.code == 64, "\(arguments): \(result.output.stderr)")
      #expect(result.output.stderr.contains("paths are relative to the base URL"))
    }
    #expect(other.acceptedCount == 0)
    #expect(base.acceptedCount == 0)
  }

  @Test("-v never prints user:password@, the token or raw control characters")
  func verboseRedacts() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 500 Oops\r\nContent-Type: text/plain\r\nX-Evil: a\u{1B}[2Jb\r\n"
          + "Set-Cookie: sid=cookie-secret\r\nContent-Length: 14\r\nConnection: close\r\n\r\n"
          + "boom\u{1B}[31m\r\nred\r\n"))
    defer { server.stop() }
    let base = "http://alice:pa55word@127.0.0.1:\(server.port)"
    for transport in ["curl", "urlsession"] {
      let result = await InProcessCLI.run(
        base, ["get", "/articles?access_token=query-secret&x=1"], dataDir: dir,
        environment: ["COURIER_TOKEN": "s3cr3t-token"],
        globalFlags: ["-v", "--max-attempts", "1", "--transport", transport])
      let stderr = result.output.stderr
      #expect(result.code != 0)
      // `HTTPRequest` keeps no `user:password@` (decision 2201): the line names the server alone.
      #expect(
        stderr.contains("GET http://127.0.0.1:\(server.port)/articles?"), "\(transport): \(stderr)")
      for secret in ["pa55word", "alice:", "s3cr3t-token", "query-secret", "cookie-secret"] {
        #expect(!stderr.contains(secret), "\(transport) leaked \(secret): \(stderr)")
      }
      #expect(!stderr.contains("\u{1B}"), "\(transport): \(stderr.debugDescription)")
      #expect(!stderr.contains("\r"), "\(transport): \(stderr.debugDescription)")
    }
    // The server did get the token: redaction is the log's business only.
    #expect(server.requestHeads.allSatisfy { $0.contains("authorization: bearer s3cr3t-token") })
  }

  @Test("a damaged session token is refused before sending, the same with both transports")
  func damagedSession() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let session = #"{"accessToken":"abc\r\nX-Injected: 1"}"#
    try Data(session.utf8).write(to: dir.appendingPathComponent("session.json"))
    for transport in ["curl", "urlsession"] {
      let result = await InProcessCLI.run(
        server.url.absoluteString, ["get", "/articles"], dataDir: dir,
        globalFlags: ["--transport", transport])
      #expect(result.code == 77, "\(transport): \(result.output.stderr)")
      #expect(
        result.output.stderr == "courier: The saved session is damaged. Please log in again.\n",
        "\(transport)")
    }
    #expect(server.acceptedCount == 0)
  }

  @Test("login --password warns on stderr that the password is visible to other users")
  func passwordWarning() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
          + "Connection: close\r\n\r\n{}"))
    defer { server.stop() }
    let argument = await InProcessCLI.run(
      server.url.absoluteString, ["login", "--username", "u", "--password", "pw"], dataDir: dir)
    #expect(argument.output.stderr.contains("warning: --password on the command line is visible"))
    let stdin = await InProcessCLI.run(
      server.url.absoluteString, ["login", "--username", "u", "--password-stdin"], dataDir: dir,
      input: "pw\n")
    #expect(!stdin.output.stderr.contains("warning"))
    #expect(server.requestHeads.count == 2)
  }

  @Test("--password-stdin takes the first line, without its line ending")
  func passwordFirstLine() {
    #expect(SessionCommands.firstLine("secret\n") == "secret")
    #expect(SessionCommands.firstLine("secret\r\n") == "secret")
    #expect(SessionCommands.firstLine("secret\nsecond line\n") == "secret")
    #expect(SessionCommands.firstLine(" spaced pass ") == " spaced pass ")
    #expect(SessionCommands.firstLine("") == nil)
    #expect(SessionCommands.firstLine("\n") == "")
  }

  @Test("help and README show --password-stdin")
  func documented() throws {
    #expect(CourierCommand.Login.helpMessage().contains("--password-stdin"))
    let readme = try String(
      contentsOf: ReferenceBackend.repositoryRoot.appendingPathComponent("README.md"),
      encoding: .utf8)
    #expect(readme.contains("login --username alice --password-stdin"))
    #expect(!readme.contains("--password secret"))
  }
}
