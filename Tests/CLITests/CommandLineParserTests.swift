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
}
