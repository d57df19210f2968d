/// Every command, subcommand and flag `courier` accepts, as data. `CommandLineParser` takes the
/// flags each command accepts from here, and the shell completions and the man page are
/// generated from it (`courier completions bash|zsh|fish`, `courier manpage`), so none of them
/// can drift from what the parser does.
public enum CommandTable {
  /// What a flag's value or a positional argument is, for completion.
  public enum ValueKind: Sendable, Equatable {
    /// Free text: nothing to complete.
    case text
    /// A file.
    case file
    /// A folder.
    case directory
    /// One of these words.
    case choices([String])
    /// The name of a visible command (`courier help COMMAND`).
    case commandName
  }

  /// One flag.
  public struct Flag: Sendable, Equatable {
    /// The long name, `--title`.
    public var name: String
    /// A short alias, `-v`.
    public var short: String?
    /// The placeholder of its value (`URL`), nil for a switch.
    public var value: String?
    /// What its value is.
    public var kind: ValueKind
    /// Whether it may be given more than once (each value counts).
    public var repeatable: Bool
    /// One line for a person.
    public var summary: String

    /// Whether it takes a value.
    public var takesValue: Bool { value != nil }

    /// A flag taking a value.
    static func option(
      _ name: String, _ value: String, _ summary: String, kind: ValueKind = .text,
      repeatable: Bool = false
    ) -> Flag {
      Flag(
        name: name, short: nil, value: value, kind: kind, repeatable: repeatable, summary: summary
      )
    }

    /// A switch.
    static func toggle(_ name: String, short: String? = nil, _ summary: String) -> Flag {
      Flag(name: name, short: short, value: nil, kind: .text, repeatable: false, summary: summary)
    }
  }

  /// One positional argument.
  public struct Positional: Sendable, Equatable {
    /// Its placeholder: `FILE`, `ID`.
    public var name: String
    /// What it is.
    public var kind: ValueKind
    /// Whether the command can do without it (`outbox retry --all`).
    public var optional: Bool
  }

  /// A command or a subcommand.
  public struct Entry: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// One line for a person.
    public var summary: String
    /// The flags it accepts besides the global ones.
    public var flags: [Flag]
    /// Its positional arguments, in order.
    public var positionals: [Positional]
    /// Its subcommands.
    public var subcommands: [Entry]
    /// Whether the command also runs without a subcommand (`courier outbox`).
    public var runsWithoutSubcommand: Bool
    /// Hidden from the help, the completions and the man page (tools for packagers).
    public var hidden: Bool

    init(
      _ name: String, _ summary: String, flags: [Flag] = [], positionals: [Positional] = [],
      subcommands: [Entry] = [], runsWithoutSubcommand: Bool = false, hidden: Bool = false
    ) {
      self.name = name
      self.summary = summary
      self.flags = flags
      self.positionals = positionals
      self.subcommands = subcommands
      self.runsWithoutSubcommand = runsWithoutSubcommand
      self.hidden = hidden
    }

    /// The subcommand with this name.
    public func subcommand(_ name: String) -> Entry? {
      subcommands.first { $0.name == name }
    }

    /// The names of the flags taking a value.
    public var valueFlagNames: Set<String> { Set(flags.filter(\.takesValue).map(\.name)) }

    /// The names of the switches.
    public var switchNames: Set<String> { Set(flags.filter { !$0.takesValue }.map(\.name)) }

    /// Whether `name` is one of its flags taking a value: a scan of a few flags, where
    /// `valueFlagNames` builds a set at each use (the parser asks for every option it reads).
    func takesValue(_ name: String) -> Bool {
      flags.contains { $0.takesValue && $0.name == name }
    }

    /// Whether `name` is one of its switches, by the same scan.
    func hasSwitch(_ name: String) -> Bool {
      flags.contains { !$0.takesValue && $0.name == name }
    }
  }

  /// The transports `--transport` names (the composition root's, kept in step by a test).
  static let transportNames = ["curl", "urlsession", "memory"]

  /// The policies `--conflict-policy` names, spelled as the config file does
  /// (`ConflictPolicy`'s, kept in step by a test).
  static let conflictPolicyNames = ["lastWriteWins", "serverWins", "manual", "merge"]

  /// Flags every command accepts, anywhere on the line.
  public static let globalFlags: [Flag] = [
    .option("--base-url", "URL", "the server (default http://127.0.0.1:8080)"),
    .option("--config", "FILE", "a JSON config file", kind: .file),
    .option("--data-dir", "DIR", "where the session and outbox live", kind: .directory),
    .option("--transport", "NAME", "the transport", kind: .choices(transportNames)),
    .option("--timeout", "SECONDS", "deadline of one attempt, 1 to 86400"),
    .option("--max-attempts", "N", "attempts in all for a transient failure, 1 to 100"),
    .option(
      "--conflict-policy", "POLICY", "how a version conflict is settled when a write is sent",
      kind: .choices(conflictPolicyNames)),
    .toggle("--json", "print one JSON object per line, for scripts"),
    .toggle("--verbose", short: "-v", "show each request and retry decision on standard error"),
    .toggle("--help", short: "-h", "show help"),
  ]

  /// `--version`: only before a command.
  public static let versionFlag = Flag.toggle(
    "--version", "print the version and the adapters of this build")

  /// The shells `courier completions` writes for.
  public static let shells = CompletionShell.allCases.map(\.rawValue)

  /// The commands, in the order `--help` lists them.
  public static let commands: [Entry] = [
    Entry(
      "login", "log in and keep the session in the data directory",
      flags: [
        .option("--username", "USER", "the user name"),
        .option("--password", "PASSWORD", "the password (visible in the process list)"),
        .toggle("--password-stdin", "read the password from the first line of standard input"),
      ]),
    Entry("logout", "forget the session"),
    Entry(
      "get", "send a GET through the whole pipeline and print the body",
      positionals: [Positional(name: "PATH", kind: .text, optional: false)]),
    Entry(
      "upload", "compress a photo and send it as multipart/form-data, with progress",
      flags: [
        .option("--title", "T", "the photo's title (default: the file's name)"),
        .option("--field", "NAME=VALUE", "an extra text field", repeatable: true),
        .option("--to", "URL", "the target (default BASE_URL/photos)"),
        .option("--max-pixels", "N", "the longest edge after downsampling (default 2048)"),
        .option("--quality", "Q", "JPEG quality, 1-100 or 0.01-1.0 (default 70)"),
        .toggle("--no-compress", "send the file as is"),
        .toggle("--resumable", "resumable upload with tus 1.0.0 (resumes after kill -9)"),
        .toggle("--queue", "queue it in the outbox and return at once; 'courier sync' sends it"),
      ],
      positionals: [Positional(name: "FILE", kind: .file, optional: false)]),
    Entry("status", "print the network path now, and why"),
    Entry("watch", "print every change of the network path until interrupted"),
    Entry(
      "articles", "list, add, edit or delete articles (offline first)",
      subcommands: [
        Entry(
          "list", "the cached articles at once, then refreshed",
          flags: [.toggle("--offline", "only the cache: no refresh")]),
        Entry(
          "add", "add an article (saved locally, then sent)",
          flags: [
            .option("--title", "T", "the title"), .option("--body", "B", "the body"),
          ]),
        Entry(
          "edit", "change an article's title or body",
          flags: [
            .option("--title", "T", "the new title"), .option("--body", "B", "the new body"),
          ],
          positionals: [Positional(name: "ID", kind: .text, optional: false)]),
        Entry(
          "delete", "delete an article",
          positionals: [Positional(name: "ID", kind: .text, optional: false)]),
      ]),
    Entry(
      "records", "list, show, add, edit or delete the records of a declared collection",
      subcommands: [
        Entry(
          "list", "the cached records at once, then refreshed",
          flags: [.toggle("--offline", "only the cache: no refresh")],
          positionals: [collection]),
        Entry("show", "one record: its fields, version and state", positionals: [collection, id]),
        Entry(
          "add", "add a record (saved locally, then sent)",
          flags: [
            .option("--id", "ID", "the record's id (default: a new UUID)"), field, data,
          ],
          positionals: [collection]),
        Entry(
          "edit", "change some fields of a record",
          flags: [
            field, data,
            .option("--remove", "NAME", "take a field out of the record", repeatable: true),
          ],
          positionals: [collection, id]),
        Entry("delete", "delete a record", positionals: [collection, id]),
      ]),
    Entry(
      "outbox", "show writes waiting to be sent, refused, or in conflict",
      subcommands: [
        Entry(
          "retry", "put a refused or conflicted entry back in the queue, then send",
          flags: [.toggle("--all", "every refused or conflicted entry")],
          positionals: [Positional(name: "ID", kind: .text, optional: true)]),
        Entry(
          "discard", "drop an entry and show the server's copy again",
          positionals: [Positional(name: "ID", kind: .text, optional: false)]),
      ],
      runsWithoutSubcommand: true),
    Entry(
      "sync", "send waiting writes now (or whenever the network returns, with --watch)",
      flags: [.toggle("--watch", "stay running and replay whenever the network returns")]),
    Entry(
      "help", "show the help of a command",
      positionals: [Positional(name: "COMMAND", kind: .commandName, optional: true)]),
    Entry(
      "completions", "print the completion script of a shell",
      positionals: [Positional(name: "SHELL", kind: .choices(shells), optional: false)],
      hidden: true),
    Entry("manpage", "print the man page (roff)", hidden: true),
  ]

  /// `courier records`' collection argument.
  static let collection = Positional(name: "COLLECTION", kind: .text, optional: false)
  /// A record's id.
  static let id = Positional(name: "ID", kind: .text, optional: false)
  /// `--field NAME=VALUE` of `courier records`.
  static let field = Flag.option(
    "--field", "NAME=VALUE", "a field, read as its declared kind", repeatable: true)
  /// `--data JSON` of `courier records`.
  static let data = Flag.option("--data", "JSON", "the fields as one JSON object")

  /// The commands a person sees (help, completions, man page).
  public static var visibleCommands: [Entry] { commands.filter { !$0.hidden } }

  /// The command with this name.
  /// - Parameter name: its name.
  /// - Returns: the entry, or nil.
  public static func command(_ name: String) -> Entry? {
    commands.first { $0.name == name }
  }

  /// The entry of a command or subcommand known to exist (the parser's own names).
  static func entry(_ command: String, _ subcommand: String? = nil) -> Entry {
    guard let entry = self.command(command) else {
      preconditionFailure("“\(command)” is not in CommandTable")
    }
    guard let subcommand else { return entry }
    guard let sub = entry.subcommand(subcommand) else {
      preconditionFailure("“\(command) \(subcommand)” is not in CommandTable")
    }
    return sub
  }

  /// Whether `name` is a global flag taking a value. A scan of the ten global flags: the set
  /// and the dictionary this replaced cost more to build, at every start, than every lookup
  /// a command line makes (callgrind, issue 14).
  static func isGlobalValueFlag(_ name: String) -> Bool {
    globalFlags.contains { $0.takesValue && $0.name == name }
  }

  /// The long name of the global switch spelled `name` (`--verbose` or `-v`), or nil.
  static func globalSwitch(_ name: String) -> String? {
    globalFlags.first { !$0.takesValue && ($0.name == name || $0.short == name) }?.name
  }
}
