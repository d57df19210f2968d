import CourierCLI
import Testing

@Suite("CommandLineParser")
struct CommandLineParserTests {
  @Test("global flags anywhere, both spellings")
  func globals() throws {
    let invocation = try CommandLineParser.parse([
      "--base-url", "http://h:1", "get", "/articles", "--json", "--verbose", "--timeout=5",
    ])
    #expect(invocation.command == .get(path: "/articles"))
    #expect(invocation.global.baseURL == "http://h:1")
    #expect(invocation.global.json)
    #expect(invocation.global.verbose)
    #expect(invocation.global.timeout == "5")
  }

  @Test(
    "help everywhere",
    arguments: [
      ([], nil), (["--help"], nil), (["help"], nil), (["help", "login"], "login"),
      (["login", "--help"], "login"), (["get", "-h"], "get"),
    ] as [([String], String?)])
  func help(_ arguments: [String], _ topic: String?) throws {
    #expect(try CommandLineParser.parse(arguments).command == .help(topic: topic))
  }

  @Test("login password sources")
  func login() throws {
    #expect(
      try CommandLineParser.parse(["login", "--username", "alice", "--password", "secret"]).command
        == .login(username: "alice", password: .argument("secret")))
    #expect(
      try CommandLineParser.parse(["login", "--username=alice", "--password-stdin"]).command
        == .login(username: "alice", password: .standardInput))
    #expect(
      try CommandLineParser.parse(["login", "--username", "alice"]).command
        == .login(username: "alice", password: .environment))
  }

  @Test(
    "usage errors",
    arguments: [
      ["frobnicate"], ["get"], ["get", "a", "b"], ["login"], ["login", "--username"],
      ["login", "--username", "a", "--password", "p", "--password-stdin"], ["logout", "now"],
      ["login", "--username", "a", "--bogus"], ["--base-url"],
    ])
  func usageErrors(_ arguments: [String]) {
    #expect(throws: UsageError.self) { try CommandLineParser.parse(arguments) }
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
    ] {
      #expect(
        try CommandLineParser.parse(line).command
          == .records(.add(collection: "notes", id: "n1", fields: fields)), "\(line)")
    }
    #expect(
      try CommandLineParser.parse(["records", "notes", "list", "--offline"]).command
        == .records(.list(collection: "notes", offline: true)))
    #expect(
      try CommandLineParser.parse(["records", "show", "notes", "n1"]).command
        == .records(.show(collection: "notes", id: "n1")))
    #expect(
      try CommandLineParser.parse(["records", "notes", "edit", "n1", "--remove", "tags"]).command
        == .records(
          .edit(collection: "notes", id: "n1", fields: RecordFieldsInput(), remove: ["tags"])))
    #expect(
      try CommandLineParser.parse(["records", "notes", "delete", "n1"]).command
        == .records(.delete(collection: "notes", id: "n1")))
    for bad in [
      ["records"], ["records", "notes"], ["records", "notes", "add"],
      ["records", "notes", "edit", "n1"], ["records", "notes", "show"],
      ["records", "notes", "add", "--field", "=x"], ["records", "purge", "notes"],
      ["records", "notes", "list", "extra"], ["records", "notes", "delete", "a", "b"],
    ] {
      #expect(throws: UsageError.self, "\(bad)") { try CommandLineParser.parse(bad) }
    }
    #expect(HelpText.text(for: "records")?.contains("--field NAME=VALUE") == true)
  }
}
