import CourierCLI
import CourierLinux
import Foundation
import Testing

/// The parser accepts exactly what `CommandTable` says, and the help agrees with it.
@Suite("CommandTable")
struct CommandTableTests {
  /// A shortest valid line of every command and subcommand. A command added to the table
  /// without one here fails `everyEntryHasALine`.
  static let minimal: [String: [String]] = [
    "login": ["login", "--username", "u"],
    "logout": ["logout"],
    "get": ["get", "/x"],
    "upload": ["upload", "photo.jpg"],
    "status": ["status"],
    "watch": ["watch"],
    "articles list": ["articles", "list"],
    "articles add": ["articles", "add", "--title", "t"],
    "articles edit": ["articles", "edit", "1", "--title", "t"],
    "articles delete": ["articles", "delete", "1"],
    "records list": ["records", "list", "notes"],
    "records show": ["records", "show", "notes", "1"],
    "records add": ["records", "add", "notes", "--field", "a=b"],
    "records edit": ["records", "edit", "notes", "1", "--remove", "x"],
    "records delete": ["records", "delete", "notes", "1"],
    "outbox": ["outbox"],
    "outbox retry": ["outbox", "retry", "--all"],
    "outbox discard": ["outbox", "discard", "1"],
    "sync": ["sync"],
    "help": ["help"],
    "completions": ["completions", "bash"],
    "manpage": ["manpage"],
  ]

  /// A valid value for flags whose value is checked.
  static let sampleValues = [
    "--max-pixels": "100", "--quality": "70", "--field": "a=b", "--transport": "curl",
    "--timeout": "5", "--max-attempts": "2", "--conflict-policy": "merge",
  ]

  /// Every (path, entry) of the table: commands that run on their own, and subcommands.
  static var entries: [(path: String, entry: CommandTable.Entry)] {
    var result: [(String, CommandTable.Entry)] = []
    for command in CommandTable.commands {
      if command.subcommands.isEmpty || command.runsWithoutSubcommand {
        result.append((command.name, command))
      }
      for sub in command.subcommands { result.append(("\(command.name) \(sub.name)", sub)) }
    }
    return result
  }

  static func arguments(_ flag: CommandTable.Flag, value: String = "v2") -> [String] {
    flag.takesValue ? [flag.name, sampleValues[flag.name] ?? value] : [flag.name]
  }

  @Test("every command and subcommand of the table has a line here, and it parses")
  func everyEntryHasALine() throws {
    #expect(Set(Self.entries.map(\.path)) == Set(Self.minimal.keys))
    for (path, line) in Self.minimal {
      #expect(throws: Never.self, "\(path)") { try CommandLineParser.parse(line) }
    }
  }

  @Test("every flag of the table is accepted by its command, and changes the result")
  func everyFlagIsAccepted() throws {
    for (path, entry) in Self.entries {
      let line = try #require(Self.minimal[path])
      let base = try CommandLineParser.parse(line)
      for flag in entry.flags {
        let parsed = try CommandLineParser.parse(line + Self.arguments(flag))
        if !line.contains(flag.name) {
          #expect(parsed != base, "\(path) \(flag.name) has no effect")
        }
        if flag.takesValue {
          // The `--name=value` spelling too.
          let inline = "\(flag.name)=\(Self.sampleValues[flag.name] ?? "v2")"
          #expect(try CommandLineParser.parse(line + [inline]) == parsed, "\(path) \(inline)")
        }
      }
    }
  }

  @Test("a flag of another command, or none, is refused: the table is all a command accepts")
  func otherFlagsAreRefused() throws {
    let allFlags = Self.entries.flatMap(\.entry.flags)
    for (path, entry) in Self.entries {
      let line = try #require(Self.minimal[path])
      let own = Set(entry.flags.map(\.name))
      for flag in allFlags where !own.contains(flag.name) {
        #expect(throws: UsageError.self, "\(path) accepted \(flag.name)") {
          try CommandLineParser.parse(line + Self.arguments(flag))
        }
      }
      #expect(throws: UsageError.self) { try CommandLineParser.parse(line + ["--bogus"]) }
    }
  }

  @Test("every global flag works before and after each command")
  func globalFlags() throws {
    for (path, _) in Self.entries {
      let line = try #require(Self.minimal[path])
      let base = try CommandLineParser.parse(line)
      for flag in CommandTable.globalFlags {
        for spelling in [flag.name] + (flag.short.map { [$0] } ?? []) {
          var arguments = Self.arguments(flag)
          arguments[0] = spelling
          let before = try CommandLineParser.parse(arguments + line)
          let after = try CommandLineParser.parse(line + arguments)
          #expect(before == after, "\(path) \(spelling)")
          if flag.name == "--help" {
            #expect(before.command == .help(topic: line[0]))
          } else {
            #expect(before.global != base.global, "\(path) \(spelling) has no effect")
          }
        }
      }
    }
  }

  @Test("commands the table does not have are refused; the help lists the visible ones")
  func commands() {
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["frobnicate"]) }
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["articles", "frobnicate"]) }
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["outbox", "frobnicate"]) }
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["completions", "tcsh"]) }
    #expect(CommandLineParser.commands == CommandTable.visibleCommands.map(\.name))
    #expect(!CommandLineParser.commands.contains("completions"))
    for command in CommandTable.commands where command.hidden {
      #expect(HelpText.text(for: command.name) != nil, "no help for \(command.name)")
      #expect(HelpText.text(for: nil)?.contains(command.name) == false, "\(command.name) shown")
    }
    for command in CommandTable.visibleCommands {
      let help = HelpText.text(for: command.name)
      #expect(help != nil, "no help for \(command.name)")
      #expect(HelpText.text(for: nil)?.contains("  \(command.name) ") == true, "\(command.name)")
      // The help names every flag the command accepts.
      for flag in command.flags + command.subcommands.flatMap(\.flags) {
        #expect(help?.contains(flag.name) == true, "help of \(command.name) lacks \(flag.name)")
      }
    }
    for flag in CommandTable.globalFlags + [CommandTable.versionFlag] {
      #expect(HelpText.text(for: nil)?.contains(flag.name) == true, "\(flag.name)")
    }
  }

  @Test("a flag name means the same everywhere (the completion scripts rely on it)")
  func flagNamesAreConsistent() {
    var byName: [String: CommandTable.Flag] = [:]
    let all = CommandTable.globalFlags + Self.entries.flatMap(\.entry.flags)
    for flag in all {
      if let other = byName[flag.name] {
        #expect(other.takesValue == flag.takesValue, "\(flag.name)")
        #expect(other.kind == flag.kind, "\(flag.name)")
      }
      byName[flag.name] = flag
    }
    let globals = Set(CommandTable.globalFlags.map(\.name))
    for (path, entry) in Self.entries {
      #expect(Set(entry.flags.map(\.name)).isDisjoint(with: globals), "\(path)")
    }
  }

  @Test("--transport offers the composition root's transports")
  func transports() throws {
    let flag = try #require(CommandTable.globalFlags.first { $0.name == "--transport" })
    #expect(flag.kind == .choices(CourierConfig.TransportAdapter.allCases.map(\.rawValue)))
  }

  @Test("--conflict-policy offers every policy, spelled as the config file spells them")
  func conflictPolicies() throws {
    let flag = try #require(CommandTable.globalFlags.first { $0.name == "--conflict-policy" })
    #expect(flag.kind == .choices(ConflictPolicy.allCases.map(\.rawValue)))
    let parsed = try CommandLineParser.parse(["sync", "--conflict-policy", "merge"])
    #expect(parsed.global.configFlags["conflict_policy"] == "merge")
    #expect(HelpText.text(for: nil)?.contains("--conflict-policy") == true)
    #expect(HelpText.text(for: "sync")?.contains("merge") == true)
  }

  @Test("--version, with --json before or after, and only before a command")
  func version() throws {
    #expect(try CommandLineParser.parse(["--version"]).command == .version)
    let json = try CommandLineParser.parse(["--version", "--json"])
    #expect(json.command == .version && json.global.json)
    #expect(try CommandLineParser.parse(["--json", "--version"]) == json)
    #expect(throws: UsageError.self) { try CommandLineParser.parse(["status", "--version"]) }
  }

  @Test("courier --version names the version and the adapters; --json says the same")
  func versionOutput() async throws {
    let text = CapturedOutput()
    #expect(await CommandRunner(environment: [:], output: text).run(["--version"]) == 0)
    #expect(text.stdout.hasPrefix("courier \(BuildInfo.version) (transports: curl, urlsession"))
    #expect(text.stdout.contains("default curl"))
    #expect(text.stdout.contains("stores: sqlite, file, memory; default sqlite"))
    let json = CapturedOutput()
    #expect(await CommandRunner(environment: [:], output: json).run(["--version", "--json"]) == 0)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(object["version"] as? String == BuildInfo.version)
    let transports = try #require(object["transports"] as? [String: Any])
    #expect(transports["default"] as? String == CourierConfig.defaultTransport.rawValue)
    #expect(
      transports["available"] as? [String]
        == CourierConfig.TransportAdapter.allCases.map(\.rawValue))
    let compressors = try #require(object["compressors"] as? [String: Any])
    #expect(compressors["default"] as? String == "vips")
  }
}
