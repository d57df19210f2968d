import CourierCLI
import CourierTestSupport
import Foundation
import Testing

/// Runs a program with arguments and returns its exit status, standard output and error, off
/// the concurrency pool (`ChildProcess`).
private func run(_ program: String, _ arguments: [String]) async throws -> (Int32, String, String) {
  let result = try await ChildProcess.run([program] + arguments)
  return (result.signaled ? 128 + result.status : result.status, result.stdout, result.stderr)
}

/// The first of these paths that is an executable, if any.
private func tool(_ candidates: String...) -> String? {
  candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

private let bash = tool("/usr/bin/bash", "/bin/bash")
private let zsh = tool("/usr/bin/zsh", "/bin/zsh")
private let fish = tool("/usr/bin/fish", "/bin/fish")
private let groff = tool("/usr/bin/groff")

/// Writes a script to a new temporary file; the caller removes it.
private func temporaryFile(_ text: String, suffix: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-completions-\(UUID())\(suffix)")
  try Data(text.utf8).write(to: url)
  return url
}

@Suite("Completions and man page, generated from CommandTable")
struct CompletionsTests {
  @Test("each script names every visible command, subcommand and flag, and no hidden command")
  func scriptsCoverTheTable() {
    for shell in CompletionShell.allCases {
      let script = Completions.script(for: shell)
      for command in CommandTable.visibleCommands {
        #expect(script.contains(command.name), "\(shell): \(command.name)")
        for sub in command.subcommands {
          #expect(script.contains(sub.name), "\(shell): \(command.name) \(sub.name)")
        }
        for flag in CommandTable.globalFlags + command.flags
          + command.subcommands.flatMap(\.flags)
        {
          // fish spells `--title` as `-l title`.
          let name = shell == .fish ? "-l \(flag.name.dropFirst(2))" : flag.name
          #expect(script.contains(name), "\(shell): \(flag.name)")
        }
      }
      let code = script.split(separator: "\n").filter {
        !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#")
      }
      for command in CommandTable.commands where command.hidden {
        #expect(!code.contains { $0.contains(command.name) }, "\(shell) offers \(command.name)")
      }
    }
  }

  @Test("courier completions SHELL prints the script")
  func command() async {
    for shell in CompletionShell.allCases {
      let output = CapturedOutput()
      let code = await CommandRunner(environment: [:], output: output).run([
        "completions", shell.rawValue,
      ])
      #expect(code == 0)
      #expect(output.stdout == Completions.script(for: shell))
    }
  }

  @Test("bash -n accepts the bash script", .enabled(if: bash != nil))
  func bashSyntax() async throws {
    let file = try temporaryFile(Completions.script(for: .bash), suffix: ".bash")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(bash ?? "", ["-n", file.path])
    #expect(code == 0, "\(error)")
  }

  @Test(
    "bash completes what the table holds",
    .enabled(if: bash != nil),
    arguments: [
      ("courier art", "articles"), ("courier articles a", "add"),
      ("courier articles add --tit", "--title"), ("courier --transport u", "urlsession"),
      ("courier --base-url http://h sta", "status"), ("courier outbox r", "retry"),
      ("courier help up", "upload"), ("courier sync --w", "--watch"),
      ("courier upload --no-", "--no-compress"), ("courier --vers", "--version"),
      ("courier --base-url=http://h:1 --timeout 5 sta", "status"),
      ("courier --transport curl articles --json ed", "edit"),
      ("courier --transport=u", "urlsession"), ("courier --transport=", "curl urlsession memory"),
    ])
  func bashCompletes(_ line: String, _ expected: String) async throws {
    let file = try temporaryFile(Completions.script(for: .bash), suffix: ".bash")
    defer { try? FileManager.default.removeItem(at: file) }
    // The words as bash splits them (at blanks, `=` and `:`, its COMP_WORDBREAKS that matter
    // here), the cursor at the end of the last one.
    let driver = """
      source "$1"
      read -ra COMP_WORDS <<<"$(sed 's/[=:]/ & /g' <<<"$2")"
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMP_LINE="$2"
      COMP_POINT=${#COMP_LINE}
      _courier
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let (code, output, error) = try await run(bash ?? "", ["-c", driver, "bash", file.path, line])
    #expect(code == 0, "\(error)")
    let offered: [String] = output.split(separator: "\n").map { String($0) }
    let wanted: [String] = expected.split(separator: " ").map { String($0) }
    #expect(offered == wanted, "\(line)")
  }

  @Test("bash offers nothing the parser would refuse")
  func bashOffersNoForeignFlag() throws {
    let script = Completions.script(for: .bash)
    let line = try #require(script.split(separator: "\n").first { $0.contains("\"sync\") words=") })
    #expect(!line.contains("--offline"))
    #expect(!line.contains("--title"))
  }

  @Test("zsh -n accepts the zsh script", .enabled(if: zsh != nil))
  func zshSyntax() async throws {
    let file = try temporaryFile(Completions.script(for: .zsh), suffix: ".zsh")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(zsh ?? "", ["-n", file.path])
    #expect(code == 0, "\(error)")
  }

  @Test("fish --no-execute accepts the fish script", .enabled(if: fish != nil))
  func fishSyntax() async throws {
    let file = try temporaryFile(Completions.script(for: .fish), suffix: ".fish")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(fish ?? "", ["--no-execute", file.path])
    #expect(code == 0, "\(error)")
  }

  @Test(
    "fish completes what the table holds",
    .enabled(if: fish != nil),
    arguments: [
      ("courier art", ["articles"]), ("courier articles a", ["add"]),
      ("courier articles add --bo", ["--body"]), ("courier --transport u", ["urlsession"]),
      ("courier --base-url http://h sta", ["status"]), ("courier outbox retry --a", ["--all"]),
      ("courier help up", ["upload"]), ("courier sync --w", ["--watch"]),
      ("courier status --w", []),
    ])
  func fishCompletes(_ line: String, _ expected: [String]) async throws {
    let file = try temporaryFile(Completions.script(for: .fish), suffix: ".fish")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, output, error) = try await run(
      fish ?? "", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", file.path, line])
    #expect(code == 0, "\(error)")
    #expect(error.isEmpty, "\(error)")
    let words = output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
    #expect(words == expected, "\(line)")
  }

  @Test("courier manpage: every visible command and flag, roff-escaped")
  func manPage() async {
    let output = CapturedOutput()
    #expect(await CommandRunner(environment: [:], output: output).run(["manpage"]) == 0)
    let page = output.stdout
    #expect(page.hasPrefix(".TH COURIER 1 "))
    #expect(page.contains("courier \(BuildInfo.version)"))
    for command in CommandTable.visibleCommands {
      #expect(page.contains(".SS \(command.name.replacingOccurrences(of: "-", with: "\\-"))"))
      for flag in command.flags + command.subcommands.flatMap(\.flags) {
        #expect(page.contains(flag.name.replacingOccurrences(of: "-", with: "\\-")), "\(flag.name)")
      }
    }
    #expect(!page.contains(".SS completions"))
    // No line a roff reader would take for a request by mistake.
    for line in page.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
      #expect(line.hasPrefix(".") && line.dropFirst().first?.isLetter == true, "\(line)")
    }
  }

  @Test("groff reads the man page without a warning", .enabled(if: groff != nil))
  func manPageRenders() async throws {
    let file = try temporaryFile(ManPage.courier, suffix: ".1")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(groff ?? "", ["-man", "-ww", "-z", file.path])
    #expect(code == 0)
    #expect(error.isEmpty, "\(error)")
  }
}
