import CourierCLI
import CourierCLITestSupport
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

/// What `courier` prints for a line it answers on the spot, and its exit code.
private func answer(_ arguments: [String]) -> (code: Int32, stdout: String) {
  let output = CapturedOutput()
  guard case .finished(let code) = CommandRunner(environment: [:], output: output).start(arguments)
  else { return (-1, "") }
  return (code, output.stdout)
}

/// Writes a script to a new temporary file; the caller removes it.
private func temporaryFile(_ text: String, suffix: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-completions-\(UUID())\(suffix)")
  try Data(text.utf8).write(to: url)
  return url
}

@Suite("Completion scripts and the man page's dump, from swift-argument-parser")
struct CompletionScriptTests {
  static let shells = ["bash", "zsh", "fish"]

  @Test(
    "--generate-completion-script SHELL names every command, subcommand and flag", arguments: shells
  )
  func scriptsCoverTheCommands(shell: String) {
    let (code, script) = answer(["--generate-completion-script", shell])
    #expect(code == 0)
    for path in CourierCommandTests.commandPaths {
      #expect(script.contains(path.last ?? ""), "\(shell): \(path)")
    }
    for flag in [
      "base-url", "config", "data-dir", "transport", "timeout", "max-attempts", "conflict-policy",
      "json", "verbose", "version", "username", "password-stdin", "title", "field", "max-pixels",
      "quality", "no-compress", "resumable", "queue", "offline", "body", "data", "remove", "all",
      "watch",
    ] {
      #expect(script.contains(flag), "\(shell): --\(flag)")
    }
    // No command of the old hand-written line.
    #expect(!script.contains("manpage"), "\(shell)")
  }

  @Test("an unknown shell is a usage error")
  func unknownShell() {
    #expect(answer(["--generate-completion-script", "tcsh"]).code == 64)
  }

  @Test("bash -n accepts the bash script", .enabled(if: bash != nil))
  func bashSyntax() async throws {
    let file = try temporaryFile(
      answer(["--generate-completion-script", "bash"]).stdout, suffix: ".bash")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(bash ?? "", ["-n", file.path])
    #expect(code == 0, "\(error)")
    // And it loads: sourcing it defines the completion.
    let (loaded, output, loadError) = try await run(
      bash ?? "", ["-c", "source \"$1\" && complete -p courier", "bash", file.path])
    #expect(loaded == 0, "\(loadError)")
    #expect(output.contains("courier"))
  }

  @Test(
    "bash completes commands, flags and the value lists",
    .enabled(if: bash != nil),
    arguments: [
      ("courier art", ["articles"]), ("courier articles add --ti", ["--title"]),
      ("courier --conflict-policy m", ["manual", "merge"]), ("courier outbox r", ["retry"]),
    ])
  func bashCompletes(_ line: String, _ expected: [String]) async throws {
    let file = try temporaryFile(
      answer(["--generate-completion-script", "bash"]).stdout, suffix: ".bash")
    defer { try? FileManager.default.removeItem(at: file) }
    // The words as bash splits them, the cursor at the end of the last one.
    let driver = """
      source "$1"
      read -ra COMP_WORDS <<<"$2"
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMP_LINE="$2"
      COMP_POINT=${#COMP_LINE}
      COMPREPLY=()
      _courier courier "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let (code, output, error) = try await run(bash ?? "", ["-c", driver, "bash", file.path, line])
    #expect(code == 0, "\(error)")
    #expect(output.split(separator: "\n").map(String.init) == expected, "\(line)")
  }

  @Test("zsh -n accepts the zsh script", .enabled(if: zsh != nil))
  func zshSyntax() async throws {
    let file = try temporaryFile(
      answer(["--generate-completion-script", "zsh"]).stdout, suffix: ".zsh")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(zsh ?? "", ["-n", file.path])
    #expect(code == 0, "\(error)")
  }

  @Test("fish --no-execute accepts the fish script", .enabled(if: fish != nil))
  func fishSyntax() async throws {
    let file = try temporaryFile(
      answer(["--generate-completion-script", "fish"]).stdout, suffix: ".fish")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await run(fish ?? "", ["--no-execute", file.path])
    #expect(code == 0, "\(error)")
  }

  @Test(
    "fish completes commands, subcommands, flags and the value lists",
    .enabled(if: fish != nil),
    arguments: [
      ("courier art", ["articles"]), ("courier articles a", ["add"]),
      ("courier articles add --bo", ["--body"]), ("courier --transport u", ["urlsession"]),
      ("courier outbox retry --a", ["--all"]), ("courier sync --w", ["--watch"]),
      ("courier --conflict-policy m", ["manual", "merge"]),
    ])
  func fishCompletes(_ line: String, _ expected: [String]) async throws {
    let file = try temporaryFile(
      answer(["--generate-completion-script", "fish"]).stdout, suffix: ".fish")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, output, error) = try await run(
      fish ?? "", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", file.path, line])
    #expect(code == 0, "\(error)")
    let words = output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
    #expect(words == expected, "\(line)")
  }

  @Test("--experimental-dump-help describes every command for the man page")
  func dumpHelp() throws {
    let (code, text) = answer(["--experimental-dump-help"])
    #expect(code == 0)
    let dump = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    let root = try #require(dump["command"] as? [String: Any])
    #expect(root["commandName"] as? String == "courier")
    func names(_ command: [String: Any]) -> [[String]] {
      let name = command["commandName"] as? String ?? ""
      let subs = command["subcommands"] as? [[String: Any]] ?? []
      return [[name]] + subs.flatMap { names($0).map { [name] + $0 } }
    }
    let paths = Set(names(root).map { Array($0.dropFirst()) })
    for path in CourierCommandTests.commandPaths {
      #expect(paths.contains(path), "\(path)")
    }
    // Every command's help names the global options: each of the root's is in that paragraph.
    let arguments = try #require(root["arguments"] as? [[String: Any]])
    let globals = arguments.compactMap {
      ($0["preferredName"] as? [String: Any])?["name"] as? String
    }
    #expect(globals.count >= 10)
    for name in globals where name != "help" {
      #expect(CourierCommand.globalOptionsHelp.contains("--\(name)"), "--\(name)")
    }
  }
}
