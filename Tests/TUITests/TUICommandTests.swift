import ArgumentParser
import CourierTUI
import Testing

/// The exit code swift-argument-parser gives `courier-tui` for an error it threw.
private func exitCode(_ arguments: [String]) -> Int32 {
  do {
    _ = try TUICommand.parse(arguments)
    return -1
  } catch {
    return TUICommand.exitCode(for: error).rawValue
  }
}

@Suite("TUICommand: courier-tui's command line, parsed by swift-argument-parser")
struct TUICommandTests {
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
    let command = try TUICommand.parse(arguments)
    #expect(command.flags == flags)
    #expect(command.demo == demo)
  }

  @Test(
    "--version, --help, the completion scripts and the help dump exit 0",
    arguments: [
      ["--version"], ["--demo", "--version"], ["--help"], ["-h"], ["--demo", "-h"],
      ["--generate-completion-script", "bash"], ["--generate-completion-script", "zsh"],
      ["--generate-completion-script", "fish"], ["--experimental-dump-help"],
    ])
  func answered(arguments: [String]) {
    #expect(exitCode(arguments) == 0)
  }

  @Test("the help names every option")
  func help() {
    let help = TUICommand.helpMessage()
    for option in ["--base-url", "--data-dir", "--config", "--demo", "--version", "--help"] {
      #expect(help.contains(option), "\(option)")
    }
    #expect(help.contains("COURIER_TOKEN"))
  }

  @Test(
    "usage errors exit 64 and name the problem",
    arguments: [
      (["--bogus"], "--bogus"),
      (["extra"], "extra"),
      (["--base-url"], "--base-url"),
      (["--data-dir="], "--data-dir"),
      (["--config", ""], "--config needs a non-empty value."),
    ])
  func usageErrors(arguments: [String], message: String) {
    #expect(exitCode(arguments) == 64, "\(arguments)")
    do {
      _ = try TUICommand.parse(arguments)
    } catch {
      let text = TUICommand.fullMessage(for: error)
      #expect(text.hasPrefix("courier-tui: "), "\(text)")
      #expect(text.contains(message), "\(text)")
    }
  }
}
