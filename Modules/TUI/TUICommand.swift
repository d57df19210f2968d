import ArgumentParser
import CourierLinux
import CourierPorts
import CourierSystem

/// `courier-tui`'s command line, on swift-argument-parser: the same configuration flags as
/// `courier`, so both read one configuration (defaults, then the file, then `COURIER_*`, then
/// these flags). The app parses it before it takes the terminal; `--help`, `--version`, the
/// completion scripts and the man page's dump are answered by swift-argument-parser.
package struct TUICommand: ParsableCommand, Sendable {
  package static let configuration = CommandConfiguration(
    commandName: "courier-tui",
    abstract: "The full-screen Courier interface.",
    discussion: """
      Your articles (cached first, then refreshed), the pending changes, the network state, \
      and photo uploads. It needs a terminal. Sign in first with `courier login`, or set \
      COURIER_TOKEN. It reads the same configuration as courier(1): defaults, then the config \
      file, then COURIER_* variables, then these options. Press ? in the interface for the \
      keys of each screen.

      Exit codes: 0 when it ends normally, 1 when it cannot start (no terminal, an unusable \
      data folder), 64 for a usage error; killed by a signal, it dies of the same signal.
      """,
    version: "courier-tui \(ToolsVersion.current)")

  /// "courier-tui: " before a usage error (swift-argument-parser writes "Error: ").
  package static var _errorPrefix: String { "courier-tui: " }

  /// `--base-url`.
  @Option(
    name: .customLong("base-url"), parsing: .unconditional,
    help: ArgumentHelp(
      "The server (else COURIER_BASE_URL, the config file, http://127.0.0.1:8080).",
      valueName: "url"))
  package var baseURL: String?

  /// `--data-dir`.
  @Option(
    name: .customLong("data-dir"), parsing: .unconditional,
    help: ArgumentHelp(
      "Where the local store and the session live (else COURIER_DATA_DIR).", valueName: "dir"),
    completion: .directory)
  package var dataDir: String?

  /// `--config`.
  @Option(
    name: .customLong("config"), parsing: .unconditional,
    help: ArgumentHelp(
      "The JSON configuration file (else ~/.config/courier/config.json).", valueName: "file"),
    completion: .file())
  package var config: String?

  /// `--demo`.
  @Flag(help: "Run on demo data, touching no network and no disk.")
  package var demo = false

  /// Creates the command's definition (swift-argument-parser's; parse to get values).
  package init() {}

  package func validate() throws {
    for (name, value) in [("--base-url", baseURL), ("--data-dir", dataDir), ("--config", config)]
    where value?.isEmpty == true {
      throw ValidationError("\(name) needs a non-empty value.")
    }
  }

  /// Configuration values by `ConfigLoader` key (`base_url`, `data_dir`, `config`).
  package var flags: [String: String] {
    var flags: [String: String] = [:]
    flags["base_url"] = baseURL
    flags["data_dir"] = dataDir
    flags["config"] = config
    return flags
  }

  /// The exit status for a usage error (BSD `EX_USAGE`).
  package static let usageExitCode: Int32 = 64

  /// Writes a message to standard error, whole, giving up quietly when it is closed (the app's
  /// failures before the terminal is taken).
  /// - Parameter text: the text, newline included.
  package static func writeError(_ text: String) {
    OpenFile.writeAll(text, to: 2)
  }
}
