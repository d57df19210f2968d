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

  @Test(
    "--version",
    arguments: [["--version"], ["--demo", "--version"], ["--version", "--data-dir", "/d"]])
  func version(arguments: [String]) throws {
    #expect(try TUICommandLine.parse(arguments) == .version)
  }

  @Test("the hidden commands scripts/install runs")
  func hiddenCommands() throws {
    for shell in TUIOptionTable.shells {
      #expect(try TUICommandLine.parse(["completions", shell]) == .completions(shell: shell))
    }
    #expect(try TUICommandLine.parse(["manpage"]) == .manpage)
    #expect(throws: TUIUsageError.self) { try TUICommandLine.parse(["completions", "tcsh"]) }
    #expect(throws: TUIUsageError.self) { try TUICommandLine.parse(["manpage", "x"]) }
  }

  @Test("every option of the table is accepted, and the help lists it")
  func tableOptionsParse() throws {
    for option in TUIOptionTable.options {
      let arguments = option.takesValue ? [option.name, "v"] : [option.name]
      let invocation = try TUICommandLine.parse(arguments)
      if let key = option.configKey {
        #expect(invocation == .run(flags: [key: "v"], demo: false), "\(option.name)")
      }
      #expect(TUICommandLine.help.contains(option.name), "\(option.name)")
    }
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
