import CourierTUI
import Testing

@Suite("TUICommandLine")
struct TUICommandLineTests {
  @Test(
    "parses the flags shared with courier",
    arguments: [
      ([], [:], false),
      (["--demo"], [:], true),
      (["--base-url", "http://10.0.0.1:8080"], ["base_url": "http://10.0.0.1:8080"], false),
      (
        ["--base-url=http://h:1", "--data-dir", "/d"],
        ["base_url": "http://h:1", "data_dir": "/d"], false
      ),
      (["--config", "/c.json", "--demo"], ["config": "/c.json"], true),
    ] as [([String], [String: String], Bool)])
  func parses(arguments: [String], flags: [String: String], demo: Bool) throws {
    #expect(try TUICommandLine.parse(arguments) == .run(flags: flags, demo: demo))
  }

  @Test("help wins", arguments: [["--help"], ["-h"], ["--demo", "-h"]])
  func help(arguments: [String]) throws {
    #expect(try TUICommandLine.parse(arguments) == .help)
  }

  @Test(
    "usage errors name the problem",
    arguments: [
      (["--bogus"], "unknown option “--bogus”."),
      (["extra"], "unexpected argument “extra”."),
      (["--base-url"], "--base-url needs a value."),
      (["--data-dir="], "--data-dir needs a non-empty value."),
      (["--config", "a", "--config", "b"], "--config is given twice."),
    ])
  func usageErrors(arguments: [String], message: String) {
    #expect(throws: TUIUsageError(message: message)) { try TUICommandLine.parse(arguments) }
  }
}
