import ArgumentParser
import CourierCLITestSupport
import CourierDomain
import CourierLinux
import Foundation
import Testing

@testable import CourierCLI

/// Parses a line as `courier` does and returns the command it names, as `T`.
private func parse<T>(_ arguments: [String], as type: T.Type = T.self) throws -> T {
  let parsed = try CommandRunner.parse(arguments)
  return try #require(parsed as? T, "\(arguments) parsed as \(Swift.type(of: parsed))")
}

/// What `courier` answers on the spot (no task): the exit code and its output, or nil when the
/// line names a command to run.
private func answer(_ arguments: [String]) -> (code: Int32, stdout: String, stderr: String)? {
  let output = CapturedOutput()
  switch CommandRunner(environment: [:], output: output).start(arguments) {
  case .finished(let code): return (code, output.stdout, output.stderr)
  case .run: return nil
  }
}

@Suite("CourierCommand: courier's command line, parsed by swift-argument-parser")
struct CourierCommandTests {
  @Test("global flags anywhere, both spellings")
  func globals() throws {
    let get = try parse(
      ["--base-url", "http://h:1", "get", "/articles", "--json", "-v", "--timeout=5"],
      as: CourierCommand.Get.self)
    #expect(get.path == "/articles")
    #expect(get.global.baseURL == "http://h:1")
    #expect(get.global.json && get.global.verbose)
    #expect(get.global.timeout == "5")
    let add = try parse(
      [
        "articles", "--data-dir", "/d", "add", "--title", "t", "--config=/c.json", "--transport",
        "memory", "--max-attempts", "3", "--conflict-policy", "merge", "--verbose",
      ], as: CourierCommand.Articles.Add.self)
    #expect(
      add.global.configFlags == [
        "data_dir": "/d", "config": "/c.json", "transport": "memory", "max_attempts": "3",
        "conflict_policy": "merge",
      ])
    #expect(add.global.verbose && !add.global.json)
    // A value is the next word whatever it looks like, as before: the configuration or the
    // command checks it.
    let negative = try parse(["--timeout", "-5", "get", "/x"], as: CourierCommand.Get.self)
    #expect(negative.global.timeout == "-5")
    let dash = try parse(
      ["articles", "add", "--title", "-x"], as: CourierCommand.Articles.Add.self)
    #expect(dash.title == "-x")
  }

  @Test("login: the password's three sources")
  func login() throws {
    let argument = try parse(
      ["login", "--username", "alice", "--password", "secret"], as: CourierCommand.Login.self)
    #expect(argument.username == "alice" && argument.passwordSource == .argument("secret"))
    let stdin = try parse(
      ["login", "--username=alice", "--password-stdin"], as: CourierCommand.Login.self)
    #expect(stdin.passwordSource == .standardInput)
    let environment = try parse(["login", "--username", "alice"], as: CourierCommand.Login.self)
    #expect(environment.passwordSource == .environment)
  }

  @Test("upload: every flag, checked as before")
  func upload() throws {
    let upload = try parse(
      [
        "upload", "p.jpg", "--title", "Sunset", "--field", "a=b=c", "--field=tag=x", "--to",
        "http://h/p", "--max-pixels", "1024", "--quality", "0.8", "--resumable", "--queue",
      ], as: CourierCommand.Upload.self)
    var expected = UploadOptions(file: "p.jpg")
    expected.title = "Sunset"
    expected.fields = [.init(name: "a", value: "b=c"), .init(name: "tag", value: "x")]
    expected.target = "http://h/p"
    expected.maxPixels = 1024
    expected.quality = 80
    expected.resumable = true
    expected.queue = true
    #expect(try upload.options() == expected)
    let plain = try parse(["upload", "--no-compress", "p.jpg"], as: CourierCommand.Upload.self)
    #expect(try plain.options().noCompress)
    #expect(
      try parse(["upload", "p.jpg", "--quality", "70"], as: CourierCommand.Upload.self).options()
        .quality == 70)
  }

  @Test("articles: each subcommand's flags")
  func articles() throws {
    #expect(
      try parse(["articles", "list", "--offline"], as: CourierCommand.Articles.List.self).offline)
    let add = try parse(
      ["articles", "add", "--title", "T", "--body", "B"], as: CourierCommand.Articles.Add.self)
    #expect(add.title == "T" && add.body == "B")
    let edit = try parse(
      ["articles", "edit", "a1", "--body", "B"], as: CourierCommand.Articles.Edit.self)
    #expect(edit.id == "a1" && edit.title == nil && edit.body == "B")
    #expect(
      try parse(["articles", "delete", "a1"], as: CourierCommand.Articles.Delete.self).id == "a1")
  }

  @Test("records: the collection before or after the subcommand, fields as typed")
  func records() throws {
    let fields = RecordFieldsInput(
      data: #"{"text":"x"}"#, assignments: [.init(name: "tags", value: "a,b=c")])
    for line in [
      [
        "records", "notes", "add", "--data", #"{"text":"x"}"#, "--field", "tags=a,b=c", "--id",
        "n1",
      ],
      ["records", "add", "notes", "--field=tags=a,b=c", "--data", #"{"text":"x"}"#, "--id=n1"],
      [
        "--json", "records", "notes", "add", "--field=tags=a,b=c", "--data", #"{"text":"x"}"#,
        "--id=n1",
      ],
    ] {
      let add = try parse(line, as: CourierCommand.Records.Add.self)
      #expect(add.collection == "notes" && add.id == "n1", "\(line)")
      #expect(try add.fields.input() == fields, "\(line)")
    }
    let list = try parse(
      ["records", "notes", "list", "--offline"], as: CourierCommand.Records.List.self)
    #expect(list.collection == "notes" && list.offline)
    let show = try parse(["records", "show", "notes", "n1"], as: CourierCommand.Records.Show.self)
    #expect(show.record.collection == "notes" && show.record.id == "n1")
    let edit = try parse(
      ["records", "notes", "edit", "n1", "--remove", "tags", "--remove", "x"],
      as: CourierCommand.Records.Edit.self)
    #expect(edit.record.id == "n1" && edit.remove == ["tags", "x"])
    #expect(try edit.fields.input().isEmpty)
    let delete = try parse(
      ["records", "notes", "delete", "n1"], as: CourierCommand.Records.Delete.self)
    #expect(delete.record.collection == "notes" && delete.record.id == "n1")
  }

  @Test("outbox runs alone, or retry or discard; sync --watch")
  func outboxAndSync() throws {
    _ = try parse(["outbox", "--json"], as: CourierCommand.Outbox.self)
    let retry = try parse(["outbox", "retry", "#3"], as: CourierCommand.Outbox.Retry.self)
    #expect(retry.id == "#3" && !retry.all)
    #expect(try parse(["outbox", "retry", "--all"], as: CourierCommand.Outbox.Retry.self).all)
    #expect(
      try parse(["outbox", "discard", "3"], as: CourierCommand.Outbox.Discard.self).id == "3")
    #expect(try parse(["sync", "--watch"], as: CourierCommand.Sync.self).watch)
    #expect(try !parse(["sync"], as: CourierCommand.Sync.self).watch)
    _ = try parse(["status"], as: CourierCommand.Status.self)
    _ = try parse(["watch"], as: CourierCommand.Watch.self)
    _ = try parse(["logout"], as: CourierCommand.Logout.self)
  }

  @Test(
    "usage errors exit 64 and say what is wrong, in today's words where they were clear",
    arguments: [
      (["frobnicate"], "frobnicate"),
      (["get"], "<path>"),
      (["get", "a", "b"], "'b'"),
      (["login"], "login needs --username."),
      (["login", "--username"], "--username"),
      (
        ["login", "--username", "a", "--password", "p", "--password-stdin"],
        "give --password or --password-stdin, not both."
      ),
      (["logout", "now"], "now"),
      (["login", "--username", "a", "--bogus"], "--bogus"),
      (["--base-url"], "--base-url"),
      (["upload"], "<file>"),
      (["upload", "p.jpg", "--field", "=x"], "--field takes NAME=VALUE, not “=x”."),
      (
        ["upload", "p.jpg", "--max-pixels", "8"],
        "--max-pixels takes a whole number from 16 to 65536."
      ),
      (["upload", "p.jpg", "--quality", "0"], "--quality takes 1 to 100 (or 0.01 to 1.0)."),
      (
        ["upload", "p.jpg", "--no-compress", "--quality", "50"],
        "--no-compress cannot be combined with --max-pixels or --quality."
      ),
      (["articles"], "articles needs a subcommand: list, add, edit or delete."),
      (["articles", "frobnicate"], "frobnicate"),
      (["articles", "add"], "articles add needs --title."),
      (["articles", "edit", "a1"], "articles edit needs --title, --body, --attach or --detach."),
      (["articles", "delete"], "<id>"),
      (["records"], "records needs a subcommand and a COLLECTION"),
      (["records", "notes"], "'notes'"),
      (["records", "notes", "add"], "records add needs --field NAME=VALUE or --data JSON."),
      (
        ["records", "notes", "edit", "n1"],
        "records edit needs --field NAME=VALUE, --data JSON or --remove NAME."
      ),
      (["records", "notes", "show"], "<id>"),
      (["records", "notes", "add", "--field", "=x"], "--field takes NAME=VALUE, not “=x”."),
      (["records", "purge", "notes"], "purge"),
      (["records", "notes", "list", "extra"], "extra"),
      (["records", "notes", "delete", "a", "b"], "'b'"),
      (["outbox", "retry"], "outbox retry takes one ID, or --all."),
      (["outbox", "retry", "3", "--all"], "unexpected argument “3”."),
      (["outbox", "discard"], "<id>"),
      (["outbox", "frobnicate"], "frobnicate"),
      (["sync", "--offline"], "--offline"),
      (["status", "--watch"], "--watch"),
    ] as [([String], String)])
  func usageErrors(_ arguments: [String], _ says: String) throws {
    let result = try #require(answer(arguments), "\(arguments) would run")
    #expect(result.code == 64, "\(arguments)")
    #expect(result.stdout.isEmpty, "\(arguments)")
    #expect(result.stderr.hasPrefix("courier: "), "\(arguments): \(result.stderr)")
    #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
    #expect(result.stderr.contains("--help"), "\(arguments): \(result.stderr)")
  }

  @Test("courier with no command prints the help (its commands) on standard error and exits 64")
  func noCommand() throws {
    for line in [[], ["--json"], ["--base-url", "http://h:1"]] {
      let result = try #require(answer(line))
      #expect(result.code == 64, "\(line)")
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.hasPrefix("courier: no command given.\n"))
      #expect(result.stderr.contains("USAGE: courier"))
      // The help, not only the usage: the commands to choose from (decision 2422).
      #expect(result.stderr.contains("SUBCOMMANDS:"), "\(result.stderr)")
      for command in ["login", "upload", "articles", "sync"] {
        #expect(result.stderr.contains("  \(command)"), "\(command)")
      }
    }
  }

  /// Each command's path, for the help and completion tests.
  static let commandPaths: [[String]] = [
    ["login"], ["logout"], ["get"], ["upload"], ["status"], ["watch"], ["articles"],
    ["articles", "list"], ["articles", "add"], ["articles", "edit"], ["articles", "delete"],
    ["records"], ["records", "list"], ["records", "show"], ["records", "add"],
    ["records", "edit"], ["records", "delete"], ["outbox"], ["outbox", "retry"],
    ["outbox", "discard"], ["sync"],
  ]

  @Test("--help, -h and help COMMAND: every command's help, with the global options, exit 0")
  func help() throws {
    let overview = try #require(answer(["--help"]))
    #expect(overview.code == 0 && overview.stderr.isEmpty)
    for path in Self.commandPaths where path.count == 1 {
      #expect(overview.stdout.contains(path[0]), "\(path)")
    }
    #expect(overview.stdout.contains("--version"))
    #expect(overview.stdout.contains("Exit codes: 0 success, 64 usage"))
    #expect(try #require(answer(["help"])).stdout == overview.stdout)
    for path in Self.commandPaths {
      let help = try #require(answer(path + ["--help"]))
      #expect(help.code == 0 && help.stderr.isEmpty, "\(path)")
      #expect(help.stdout.contains("USAGE:"), "\(path)")
      for flag in ["--base-url", "--data-dir", "--json", "--verbose", "--conflict-policy"] {
        #expect(help.stdout.contains(flag), "\(path): \(flag)")
      }
      #expect(try #require(answer(path + ["-h"])).stdout == help.stdout, "\(path)")
      #expect(try #require(answer(["help"] + path)).stdout == help.stdout, "\(path)")
    }
    let upload = try #require(answer(["upload", "--help"])).stdout
    for flag in [
      "--title", "--field", "--to", "--max-pixels", "--quality", "--no-compress", "--resumable",
      "--queue",
    ] {
      #expect(upload.contains(flag), "\(flag)")
    }
    #expect(try #require(answer(["records", "--help"])).stdout.contains("--field NAME=VALUE"))
    #expect(try #require(answer(["login", "--help"])).stdout.contains("--password-stdin"))
  }

  @Test("--version, anywhere, with --json before or after")
  func version() throws {
    for line in [
      ["--version"], ["--base-url", "http://h:1", "--version"], ["get", "/x", "--version"],
      ["articles", "--version"], ["outbox", "retry", "3", "--version"],
    ] {
      let text = try #require(answer(line))
      #expect(text.code == 0 && text.stdout == BuildInfo.line + "\n", "\(line)")
    }
    for line in [["--version", "--json"], ["--json", "--version"]] {
      let json = try #require(answer(line))
      #expect(json.code == 0 && json.stdout == BuildInfo.json + "\n", "\(line)")
    }
    #expect(BuildInfo.line.hasPrefix("courier \(BuildInfo.version) (transports: "))
  }

  @Test(
    "every command runs on the calling thread but sync and watch",
    arguments: [
      (["status"], true), (["articles", "add", "--title", "t"], true),
      (["articles", "list", "--offline"], true), (["outbox"], true), (["get", "/health"], true),
      (["upload", "photo.jpg"], true), (["login", "--username", "alice"], true),
      (["sync"], false), (["sync", "--watch"], false), (["watch"], false),
    ])
  func callingThread(arguments: [String], expected: Bool) throws {
    let command = try parse(arguments, as: (any CourierSubcommand).self)
    #expect(Invocation(command).runsOnCallingThread == expected)
  }

  @Test("--transport and --conflict-policy complete the composition root's names")
  func completionLists() throws {
    let script = try #require(answer(["--generate-completion-script", "bash"])).stdout
    for name in CourierConfig.TransportAdapter.allCases.map(\.rawValue)
      + ConflictPolicy.allCases.map(\.rawValue)
    {
      #expect(script.contains(name), "\(name)")
    }
  }
}

@Suite("courier's session")
struct CourierCommandSessionTests {
  @Test("the courier command frees delivered bytes in a child process (a library session does not)")
  func deliveredBodyRemoval() throws {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-command-session-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let global = try GlobalOptions.parse([
      "--base-url", "http://127.0.0.1:9", "--data-dir", dir.appendingPathComponent("data").path,
    ])
    let runner = CommandRunner(environment: ["HOME": dir.path], output: CapturedOutput())
    #expect(try runner.makeContext(global).session.deliveredBodyRemoval == .detachedProcess)
  }
}
