import CourierTUI
import CourierTestSupport
import Foundation
import Testing

/// Runs a program to its end off the concurrency pool: exit status, standard output and error
/// (standard error in a file, so that a chatty child cannot block on a full pipe).
func runTool(_ program: String, _ arguments: [String]) async throws -> (Int32, String, String) {
  try await offPool {
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-tui-tool-\(UUID()).err")
    try Data().write(to: errorFile)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = try FileHandle(forWritingTo: errorFile)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let error = try Data(contentsOf: errorFile)
    return (
      process.terminationStatus, String(decoding: output, as: UTF8.self),
      String(decoding: error, as: UTF8.self)
    )
  }
}

/// The first of these paths that is an executable, if any.
func installedTool(_ candidates: String...) -> String? {
  candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Writes text to a new temporary file; the caller removes it.
func temporaryScript(_ text: String, suffix: String) throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-tui-completions-\(UUID())\(suffix)")
  try Data(text.utf8).write(to: url)
  return url
}

private let bash = installedTool("/usr/bin/bash", "/bin/bash")
private let zsh = installedTool("/usr/bin/zsh", "/bin/zsh")
private let fish = installedTool("/usr/bin/fish", "/bin/fish")

@Suite("courier-tui's completions, generated from TUIOptionTable")
struct TUICompletionsTests {
  @Test("each script offers every option of the table and no hidden command")
  func scriptsCoverTheTable() throws {
    for shell in TUIOptionTable.shells {
      let script = try #require(TUICompletions.script(for: shell))
      for option in TUIOptionTable.options {
        let name = shell == "fish" ? "-l \(option.name.dropFirst(2))" : option.name
        #expect(script.contains(name), "\(shell): \(option.name)")
      }
      let code = script.split(separator: "\n").filter { !$0.hasPrefix("#") }
      for hidden in TUIOptionTable.hiddenCommands {
        #expect(!code.contains { $0.contains(hidden) }, "\(shell) offers \(hidden)")
      }
    }
    #expect(TUICompletions.script(for: "tcsh") == nil)
  }

  @Test("bash -n, zsh -n and fish --no-execute accept the scripts")
  func syntax() async throws {
    for (shell, tool, check) in [
      ("bash", bash, "-n"), ("zsh", zsh, "-n"), ("fish", fish, "--no-execute"),
    ] {
      guard let tool else { continue }
      let file = try temporaryScript(try #require(TUICompletions.script(for: shell)), suffix: "")
      defer { try? FileManager.default.removeItem(at: file) }
      let (code, _, error) = try await runTool(tool, [check, file.path])
      #expect(code == 0, "\(shell): \(error)")
    }
  }

  @Test(
    "bash completes what the table holds", .enabled(if: bash != nil),
    arguments: [
      ("courier-tui --da", "--data-dir"), ("courier-tui --dem", "--demo"),
      ("courier-tui --vers", "--version"), ("courier-tui --base-url http://h --de", "--demo"),
      ("courier-tui --config /etc/host", "/etc/host.conf /etc/hostname /etc/hosts"),
      ("courier-tui --data-dir=/etc/ss", "/etc/ssh /etc/ssl"),
      ("courier-tui -", "--base-url --data-dir --config --demo --version --help -h"),
    ])
  func bashCompletes(_ line: String, _ expected: String) async throws {
    let file = try temporaryScript(try #require(TUICompletions.script(for: "bash")), suffix: "")
    defer { try? FileManager.default.removeItem(at: file) }
    let driver = """
      source "$1"
      read -ra COMP_WORDS <<<"$(sed 's/[=:]/ & /g' <<<"$2")"
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      _courier_tui
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let (code, output, error) = try await runTool(
      bash ?? "", ["-c", driver, "bash", file.path, line])
    #expect(code == 0, "\(error)")
    // compgen lists files in the directory's order: compared as sets of words.
    let offered = output.split(separator: "\n").map(String.init).sorted()
    let wanted = expected.split(separator: " ").map(String.init).sorted()
    #expect(offered == wanted, "\(line)")
  }

  @Test(
    "fish completes what the table holds", .enabled(if: fish != nil),
    arguments: [("courier-tui --da", ["--data-dir"]), ("courier-tui --dem", ["--demo"])])
  func fishCompletes(_ line: String, _ expected: [String]) async throws {
    let file = try temporaryScript(try #require(TUICompletions.script(for: "fish")), suffix: "")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, output, error) = try await runTool(
      fish ?? "", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", file.path, line])
    #expect(code == 0 && error.isEmpty, "\(error)")
    let offered: [String] = output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
    #expect(offered == expected, "\(line)")
  }
}
