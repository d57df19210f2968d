import CourierCLI
import Testing

@Suite("CommandRunner")
struct CommandRunnerTests {
  @Test(
    "every command runs on the calling thread but sync and watch",
    arguments: [
      (["status"], true), (["articles", "add", "--title", "t"], true),
      (["articles", "list", "--offline"], true), (["outbox"], true), (["get", "/health"], true),
      (["upload", "photo.jpg"], true), (["login", "--username", "alice"], true),
      (["sync"], false), (["sync", "--watch"], false), (["watch"], false),
    ])
  func callingThread(arguments: [String], expected: Bool) throws {
    let invocation = try CommandLineParser.parse(arguments)
    #expect(CommandRunner.runsOnCallingThread(invocation) == expected)
  }
}
