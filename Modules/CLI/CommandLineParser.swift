#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Turns arguments into an `Invocation`. Pure: tested without a process.
public enum CommandLineParser {
  /// The commands, in the order `--help` lists them (from `CommandTable`).
  public static var commands: [String] { CommandTable.visibleCommands.map(\.name) }

  /// Parses arguments (without the program name).
  /// - Parameter arguments: the arguments.
  /// - Returns: the invocation.
  /// - Throws: `UsageError` for anything not understood.
  public static func parse(_ arguments: [String]) throws -> Invocation {
    var global = GlobalOptions()
    var rest: [String] = []
    var wantsHelp = false
    var wantsVersion = false
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      let (name, inlineValue) = split(argument)
      if argument == "--" {
        rest += arguments[(index + 1)...]
        break
      } else if CommandTable.isGlobalValueFlag(name) {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index + 1 < arguments.count else {
            throw UsageError("\(name) needs a value.", command: rest.first)
          }
          index += 1
          value = arguments[index]
        }
        switch name {
        case "--base-url": global.baseURL = value
        case "--config": global.configFile = value
        case "--data-dir": global.dataDir = value
        case "--transport": global.transport = value
        case "--timeout": global.timeout = value
        case "--conflict-policy": global.conflictPolicy = value
        default: global.maxAttempts = value
        }
      } else if let flag = CommandTable.globalSwitch(name) {
        switch flag {
        case "--json": global.json = true
        case "--verbose": global.verbose = true
        case "--help": wantsHelp = true
        default: preconditionFailure("CommandTable's global \(flag) is not parsed")
        }
      } else if name == CommandTable.versionFlag.name && rest.isEmpty {
        wantsVersion = true
      } else {
        rest.append(argument)
      }
      index += 1
    }
    if wantsVersion { return Invocation(global: global, command: .version) }
    guard let name = rest.first else {
      return Invocation(global: global, command: .help(topic: nil))
    }
    if wantsHelp { return Invocation(global: global, command: .help(topic: name)) }
    let arguments = Array(rest.dropFirst())
    let command: Command
    switch name {
    case "help":
      let options = try OptionReader(arguments, entry: CommandTable.entry(name), command: name)
      guard options.positionals.count <= 1 else {
        throw UsageError("help takes one COMMAND at most.", command: name)
      }
      command = .help(topic: options.positionals.first)
    case "login":
      command = try parseLogin(arguments)
    case "logout", "status", "watch", "manpage":
      let options = try OptionReader(arguments, entry: CommandTable.entry(name), command: name)
      try expectNothing(options.positionals, command: name)
      switch name {
      case "logout": command = .logout
      case "status": command = .status
      case "watch": command = .watch
      default: command = .manpage
      }
    case "get":
      let options = try OptionReader(arguments, entry: CommandTable.entry(name), command: name)
      guard options.positionals.count == 1, let path = options.positionals.first,
        !path.hasPrefix("-")
      else {
        throw UsageError("get takes exactly one PATH.", command: name)
      }
      command = .get(path: path)
    case "upload":
      command = .upload(try parseUpload(arguments))
    case "outbox":
      command = try parseOutbox(arguments)
    case "sync":
      let options = try OptionReader(arguments, entry: CommandTable.entry(name), command: name)
      try expectNothing(options.positionals, command: name)
      command = .sync(watch: options.has("--watch"))
    case "completions":
      let options = try OptionReader(arguments, entry: CommandTable.entry(name), command: name)
      guard options.positionals.count == 1, let shell = options.positionals.first,
        let kind = CompletionShell(rawValue: shell)
      else {
        throw UsageError(
          "completions takes one SHELL: \(CommandTable.shells.joined(separator: ", ")).",
          command: name)
      }
      command = .completions(kind)
    case "articles":
      command = .articles(try parseArticles(arguments))
    case "records":
      command = .records(try parseRecords(arguments))
    default:
      throw UsageError("unknown command “\(name)”.")
    }
    return Invocation(global: global, command: command)
  }

  static func split(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }

  static func expectNothing(_ arguments: [String], command: String) throws {
    if let first = arguments.first {
      throw UsageError("unexpected argument “\(first)”.", command: command)
    }
  }

  /// Reads `--name value` / `--name=value` options and switches of one command, accepting
  /// exactly the flags `CommandTable` gives it.
  struct OptionReader {
    var values: [String: [String]] = [:]
    var switches: Set<String> = []
    var positionals: [String] = []
    let entry: CommandTable.Entry

    init(_ arguments: [String], entry: CommandTable.Entry, command: String) throws {
      self.entry = entry
      var index = 0
      while index < arguments.count {
        let (name, inline) = CommandLineParser.split(arguments[index])
        if entry.takesValue(name) {
          if let inline {
            values[name, default: []].append(inline)
          } else {
            guard index + 1 < arguments.count else {
              throw UsageError("\(name) needs a value.", command: command)
            }
            index += 1
            values[name, default: []].append(arguments[index])
          }
        } else if entry.hasSwitch(name) {
          switches.insert(name)
        } else if name.hasPrefix("-") && name.count > 1 {
          throw UsageError("unknown option “\(name)”.", command: command)
        } else {
          positionals.append(arguments[index])
        }
        index += 1
      }
    }

    /// The last value of a flag taking one.
    func last(_ name: String) -> String? { all(name).last }

    /// Every value of a flag taking one, in order.
    func all(_ name: String) -> [String] {
      precondition(entry.takesValue(name), "\(name) is not in CommandTable")
      return values[name] ?? []
    }

    /// Whether a switch was given.
    func has(_ name: String) -> Bool {
      precondition(entry.hasSwitch(name), "\(name) is not in CommandTable")
      return switches.contains(name)
    }
  }

  static func parseLogin(_ arguments: [String]) throws -> Command {
    let options = try OptionReader(arguments, entry: CommandTable.entry("login"), command: "login")
    try expectNothing(options.positionals, command: "login")
    guard let username = options.last("--username"), !username.isEmpty else {
      throw UsageError("login needs --username.", command: "login")
    }
    if options.last("--password") != nil && options.has("--password-stdin") {
      throw UsageError("give --password or --password-stdin, not both.", command: "login")
    }
    if let password = options.last("--password") {
      return .login(username: username, password: .argument(password))
    }
    if options.has("--password-stdin") {
      return .login(username: username, password: .standardInput)
    }
    return .login(username: username, password: .environment)
  }

  static func parseUpload(_ arguments: [String]) throws -> UploadOptions {
    let options = try OptionReader(
      arguments, entry: CommandTable.entry("upload"), command: "upload")
    guard options.positionals.count == 1, let file = options.positionals.first else {
      throw UsageError("upload takes exactly one FILE.", command: "upload")
    }
    var upload = UploadOptions(file: file)
    upload.title = options.last("--title")
    upload.target = options.last("--to")
    upload.noCompress = options.has("--no-compress")
    upload.resumable = options.has("--resumable")
    upload.queue = options.has("--queue")
    for field in options.all("--field") {
      guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
        throw UsageError("--field takes NAME=VALUE, not “\(field)”.", command: "upload")
      }
      upload.fields.append(
        UploadOptions.Field(
          name: String(field[..<equals]), value: String(field[field.index(after: equals)...])))
    }
    if let pixels = options.last("--max-pixels") {
      guard let value = Int(pixels), (16...65_536).contains(value) else {
        throw UsageError("--max-pixels takes a whole number from 16 to 65536.", command: "upload")
      }
      upload.maxPixels = value
    }
    if let quality = options.last("--quality") {
      // Accept both the seed's 0.7 and libjpeg's 70.
      if let value = Double(quality), value >= 0.01, value <= 1,
        quality.contains(where: { $0 == "." })
      {
        upload.quality = Int((value * 100).rounded())
      } else if let value = Int(quality), (1...100).contains(value) {
        upload.quality = value
      } else {
        throw UsageError("--quality takes 1 to 100 (or 0.01 to 1.0).", command: "upload")
      }
    }
    if upload.noCompress && (upload.maxPixels != nil || upload.quality != nil) {
      throw UsageError(
        "--no-compress cannot be combined with --max-pixels or --quality.", command: "upload")
    }
    return upload
  }

  static func parseOutbox(_ arguments: [String]) throws -> Command {
    guard let sub = arguments.first else { return .outbox }
    let rest = Array(arguments.dropFirst())
    switch sub {
    case "retry":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("outbox", sub), command: "outbox")
      if options.has("--all") {
        try expectNothing(options.positionals, command: "outbox")
        return .outboxRetry(id: nil)
      }
      guard options.positionals.count == 1, let id = options.positionals.first else {
        throw UsageError("outbox retry takes one ID, or --all.", command: "outbox")
      }
      return .outboxRetry(id: id)
    case "discard":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("outbox", sub), command: "outbox")
      guard options.positionals.count == 1, let id = options.positionals.first else {
        throw UsageError("outbox discard takes exactly one ID.", command: "outbox")
      }
      return .outboxDiscard(id: id)
    default:
      throw UsageError("unknown outbox subcommand “\(sub)”.", command: "outbox")
    }
  }

  static func parseArticles(_ arguments: [String]) throws -> ArticlesCommand {
    guard let sub = arguments.first else {
      throw UsageError(
        "articles needs a subcommand: list, add, edit or delete.", command: "articles")
    }
    let rest = Array(arguments.dropFirst())
    switch sub {
    case "list":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("articles", sub), command: "articles")
      try expectNothing(options.positionals, command: "articles")
      return .list(offline: options.has("--offline"))
    case "add":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("articles", sub), command: "articles")
      try expectNothing(options.positionals, command: "articles")
      guard let title = options.last("--title") else {
        throw UsageError("articles add needs --title.", command: "articles")
      }
      return .add(title: title, body: options.last("--body") ?? "")
    case "edit":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("articles", sub), command: "articles")
      guard options.positionals.count == 1, let id = options.positionals.first else {
        throw UsageError("articles edit takes exactly one ID.", command: "articles")
      }
      let title = options.last("--title")
      let body = options.last("--body")
      guard title != nil || body != nil else {
        throw UsageError("articles edit needs --title or --body.", command: "articles")
      }
      return .edit(id: id, title: title, body: body)
    case "delete":
      let options = try OptionReader(
        rest, entry: CommandTable.entry("articles", sub), command: "articles")
      guard options.positionals.count == 1, let id = options.positionals.first else {
        throw UsageError("articles delete takes exactly one ID.", command: "articles")
      }
      return .delete(id: id)
    default:
      throw UsageError("unknown articles subcommand “\(sub)”.", command: "articles")
    }
  }

  /// The words `courier records` takes as a subcommand.
  static var recordsSubcommands: [String] {
    CommandTable.entry("records").subcommands.map(\.name)
  }

  static func parseRecords(_ arguments: [String]) throws -> RecordsCommand {
    let subs = recordsSubcommands
    let usage = "records needs a subcommand and a COLLECTION: \(subs.joined(separator: ", "))."
    guard let first = arguments.first else { throw UsageError(usage, command: "records") }
    // `records notes list …` is `records list notes …`: a collection's name is never one of
    // the subcommands (the config refuses those names).
    var words = arguments
    if !subs.contains(first), !first.hasPrefix("-"), arguments.count > 1,
      subs.contains(arguments[1])
    {
      words.swapAt(0, 1)
    }
    let sub = words[0]
    guard subs.contains(sub) else {
      throw UsageError("unknown records subcommand “\(sub)”. \(usage)", command: "records")
    }
    let options = try OptionReader(
      Array(words.dropFirst()), entry: CommandTable.entry("records", sub), command: "records")
    let wanted = sub == "list" || sub == "add" ? 1 : 2
    guard options.positionals.count == wanted, let collection = options.positionals.first,
      !collection.hasPrefix("-")
    else {
      throw UsageError(
        "records \(sub) takes \(wanted == 1 ? "a COLLECTION" : "a COLLECTION and an ID").",
        command: "records")
    }
    let id = wanted == 2 ? options.positionals[1] : ""
    func fields() throws -> RecordFieldsInput {
      var input = RecordFieldsInput(data: options.last("--data"))
      for field in options.all("--field") {
        guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
          throw UsageError("--field takes NAME=VALUE, not “\(field)”.", command: "records")
        }
        input.assignments.append(
          .init(
            name: String(field[..<equals]), value: String(field[field.index(after: equals)...])))
      }
      return input
    }
    switch sub {
    case "list":
      return .list(collection: collection, offline: options.has("--offline"))
    case "show":
      return .show(collection: collection, id: id)
    case "add":
      let input = try fields()
      guard !input.isEmpty else {
        throw UsageError("records add needs --field NAME=VALUE or --data JSON.", command: "records")
      }
      return .add(collection: collection, id: options.last("--id"), fields: input)
    case "edit":
      let input = try fields()
      let remove = options.all("--remove")
      guard !input.isEmpty || !remove.isEmpty else {
        throw UsageError(
          "records edit needs --field NAME=VALUE, --data JSON or --remove NAME.", command: "records"
        )
      }
      return .edit(collection: collection, id: id, fields: input, remove: remove)
    default:
      return .delete(collection: collection, id: id)
    }
  }
}
