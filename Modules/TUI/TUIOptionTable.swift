/// Every option and hidden command `courier-tui` accepts, in the order its help lists them:
/// the one table its parser checks arguments against and its help, completions and man page
/// are generated from, so that they cannot drift apart (as `CommandTable` is for `courier`).
public enum TUIOptionTable {
  /// What an option's value is, for completion.
  public enum ValueKind: Sendable, Equatable {
    /// Free text (a URL).
    case text
    /// A file path.
    case file
    /// A folder path.
    case directory
  }

  /// One option.
  public struct Option: Sendable, Equatable {
    /// The long name, `--data-dir`.
    public var name: String
    /// The short name, `-h`, if any.
    public var short: String?
    /// The value's placeholder, `DIR`; nil for a switch.
    public var value: String?
    /// What the value is.
    public var kind: ValueKind
    /// The configuration key the value sets (`data_dir`), for a value option.
    public var configKey: String?
    /// One line for the help, the completions and the man page.
    public var summary: String

    /// Whether the option takes a value.
    public var takesValue: Bool { value != nil }

    init(
      name: String, short: String? = nil, value: String? = nil, kind: ValueKind = .text,
      configKey: String? = nil, summary: String
    ) {
      self.name = name
      self.short = short
      self.value = value
      self.kind = kind
      self.configKey = configKey
      self.summary = summary
    }
  }

  /// The options, in the order the help lists them.
  public static let options: [Option] = [
    Option(
      name: "--base-url", value: "URL", kind: .text, configKey: "base_url",
      summary: "the server (else COURIER_BASE_URL, the config file, http://127.0.0.1:8080)"),
    Option(
      name: "--data-dir", value: "DIR", kind: .directory, configKey: "data_dir",
      summary: "where the local store and the session live (else COURIER_DATA_DIR)"),
    Option(
      name: "--config", value: "FILE", kind: .file, configKey: "config",
      summary: "the JSON configuration file (else ~/.config/courier/config.json)"),
    Option(name: "--demo", summary: "run on demo data, touching no network and no disk"),
    Option(name: "--version", summary: "print the version and exit"),
    Option(name: "--help", short: "-h", summary: "show this help"),
  ]

  /// The hidden commands (not in the help or the completions): what `scripts/install` runs to
  /// write the completion scripts and the man page.
  public static let hiddenCommands = ["completions", "manpage"]

  /// The shells `courier-tui completions SHELL` writes a script for.
  public static let shells = ["bash", "zsh", "fish"]

  /// The option named `name` (long or short spelling), if any.
  /// - Parameter name: `--data-dir` or `-h`.
  /// - Returns: the option.
  public static func option(named name: String) -> Option? {
    options.first { $0.name == name || $0.short == name }
  }
}
