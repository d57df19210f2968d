import ArgumentParser

extension CourierCommand {
  /// `courier records list|show|add|edit|delete COLLECTION ...`; the collection may also come
  /// first (`courier records notes list`), which `CommandRunner.parse` turns around.
  package struct Records: ParsableCommand, SubcommandGroup {
    package static let configuration = CommandConfiguration(
      commandName: "records",
      abstract: "List, show, add, edit or delete the records of a declared collection.",
      usage: """
        courier records list <collection> [--offline] [<global options>]
        courier records show <collection> <id> [<global options>]
        courier records add <collection> [--id <id>] [--field NAME=VALUE]... [--data JSON]
        courier records edit <collection> <id> [--field NAME=VALUE]... [--data JSON]
          [--remove <name>]...
        courier records delete <collection> <id> [<global options>]
        (or with the collection first: courier records <collection> list, ...)
        """,
      discussion: """
        The records of a collection the config file declares under "collections" (and of \
        articles, as JSON), offline first like `courier articles`: `list` prints the cache at \
        once, then refreshes it (unless --offline); `show` prints one record as stored here, \
        with its version and whether it waits to be sent; `add`, `edit` and `delete` apply the \
        change locally, queue it in the same outbox as every other write, try to send it, and \
        print what is still pending.

        Fields: --data gives them as one JSON object ('{"text":"hi","tags":["a"]}'); each \
        --field NAME=VALUE then sets one, read as the collection declares it (a string as is, \
        a number or true/false by its spelling, a list of strings split at commas: tags=a,b, \
        any JSON for a json field). A write is checked against the declaration before it is \
        saved: a missing required field, a field of the wrong kind, a text outside its \
        declared lengths or one the collection does not have is refused (exit 64) and nothing \
        is queued. `edit` keeps the fields it does \
        not name; --remove takes one out.

        A collection in the config file (every member but the name is optional; these are the \
        defaults of the backend contract unless shown otherwise):
          "collections": {
            "notes": {"path": "/notes", "id": "note_id", "version": "rev",
                      "updated_at": "modified_at", "fields": {"text": "string", "tags": "strings"},
                      "required": ["text"], "version_tag": "r"}
          }
        Field kinds: string, integer, number, boolean, strings, json. "lengths" bounds a \
        string field's characters: {"text": [0, 10000]}. Also "conflict_codes", \
        "gone_codes" (the error codes of a stale version and of a record already gone), \
        "write_statuses" and "delete_statuses" (the 2xx that prove a write).

        Exit codes: 0 done (a write that could not be sent yet is kept pending), 64 usage \
        (also an unknown collection or fields that do not fit it), 65 refused by the server, \
        66 no such record here, 69 offline, 73/74 the local store could not be used.
        """ + "\n\n" + CourierCommand.globalOptionsHelp,
      subcommands: [List.self, Show.self, Add.self, Edit.self, Delete.self])

    static let missingSubcommand =
      "records needs a subcommand and a COLLECTION: list, show, add, edit, delete."

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// The names of its subcommands.
    static var subcommandNames: [String] {
      configuration.subcommands.map { $0._commandName }
    }

    /// `records COLLECTION SUBCOMMAND …` as `records SUBCOMMAND COLLECTION …`, or nil when the
    /// line has no such pair after its first `records` (a collection's name is never one of the
    /// subcommands: the config refuses those names).
    /// - Parameter arguments: the command line.
    /// - Returns: the line with the two words swapped, or nil.
    static func collectionFirst(_ arguments: [String]) -> [String]? {
      guard let index = arguments.firstIndex(of: configuration.commandName ?? "records"),
        index + 2 < arguments.count
      else { return nil }
      let names = subcommandNames
      let collection = arguments[index + 1]
      guard !names.contains(collection), !collection.hasPrefix("-"),
        names.contains(arguments[index + 2])
      else { return nil }
      var swapped = arguments
      swapped.swapAt(index + 1, index + 2)
      return swapped
    }
  }
}

/// The options every write of `courier records` takes: the fields as typed.
package struct RecordFieldOptions: ParsableArguments, Sendable {
  /// `--field NAME=VALUE`, repeatable.
  @Option(
    parsing: .unconditionalSingleValue,
    help: ArgumentHelp("A field, read as its declared kind (repeatable).", valueName: "name=value"))
  package var field: [String] = []

  /// `--data JSON`.
  @Option(
    parsing: .unconditional, help: ArgumentHelp("The fields as one JSON object.", valueName: "json")
  )
  package var data: String?

  /// Creates the options' definitions (swift-argument-parser's; parse to get values).
  package init() {}

  package func validate() throws { _ = try input() }

  /// The fields as `RecordsCommands` takes them.
  /// - Returns: `--data`, then each `--field` in order.
  /// - Throws: `ValidationError` for a `--field` without `NAME=`.
  package func input() throws -> RecordFieldsInput {
    var input = RecordFieldsInput(data: data)
    for field in field {
      let (name, value) = try FieldAssignment.split(field)
      input.assignments.append(.init(name: name, value: value))
    }
    return input
  }
}

/// The record `show`, `edit` and `delete` work on: its collection and its id.
package struct RecordArguments: ParsableArguments, Sendable {
  /// The collection.
  @Argument(help: ArgumentHelp("A collection the config file declares.", valueName: "collection"))
  package var collection: String

  /// The record's id.
  @Argument(help: ArgumentHelp("The record's id.", valueName: "id")) package var id: String

  /// Creates the arguments' definitions (swift-argument-parser's; parse to get values).
  package init() {}
}

extension CourierCommand.Records {
  /// `courier records list COLLECTION [--offline]`.
  package struct List: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "The cached records at once, then refreshed.",
      usage: "courier records list <collection> [--offline] [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The collection.
    @Argument(help: ArgumentHelp("A collection the config file declares.", valueName: "collection"))
    package var collection: String

    /// `--offline`.
    @Flag(help: "Only the cache: no refresh.") package var offline = false

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await RecordsCommands.run(
        .list(collection: collection, offline: offline), context: context)
    }
  }

  /// `courier records show COLLECTION ID`.
  package struct Show: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "show",
      abstract: "One record: its fields, version and state.",
      usage: "courier records show <collection> <id> [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The collection and the record's id.
    @OptionGroup package var record: RecordArguments

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await RecordsCommands.run(
        .show(collection: record.collection, id: record.id), context: context)
    }
  }

  /// `courier records add COLLECTION [--id ID] [--field NAME=VALUE]... [--data JSON]`.
  package struct Add: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add a record (saved locally, then sent).",
      usage: """
        courier records add <collection> [--id <id>] [--field <name=value>]... [--data <json>]
          [<global options>]
        """, discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The collection.
    @Argument(help: ArgumentHelp("A collection the config file declares.", valueName: "collection"))
    package var collection: String

    /// `--id`.
    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The record's id (default: a new UUID).", valueName: "id"))
    package var id: String?

    /// `--field` and `--data`.
    @OptionGroup package var fields: RecordFieldOptions

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      guard try !fields.input().isEmpty else {
        throw ValidationError("records add needs --field NAME=VALUE or --data JSON.")
      }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await RecordsCommands.run(
        .add(collection: collection, id: id, fields: try fields.input()), context: context)
    }
  }

  /// `courier records edit COLLECTION ID [--field NAME=VALUE]... [--data JSON] [--remove NAME]...`.
  package struct Edit: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "edit",
      abstract: "Change some fields of a record.",
      usage: """
        courier records edit <collection> <id> [--field <name=value>]... [--data <json>]
          [--remove <name>]... [<global options>]
        """, discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The collection and the record's id.
    @OptionGroup package var record: RecordArguments

    /// `--field` and `--data`.
    @OptionGroup package var fields: RecordFieldOptions

    /// `--remove NAME`, repeatable.
    @Option(
      parsing: .unconditionalSingleValue,
      help: ArgumentHelp("Take a field out of the record (repeatable).", valueName: "name"))
    package var remove: [String] = []

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      guard try !fields.input().isEmpty || !remove.isEmpty else {
        throw ValidationError(
          "records edit needs --field NAME=VALUE, --data JSON or --remove NAME.")
      }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await RecordsCommands.run(
        .edit(
          collection: record.collection, id: record.id, fields: try fields.input(), remove: remove),
        context: context)
    }
  }

  /// `courier records delete COLLECTION ID`.
  package struct Delete: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Delete a record.",
      usage: "courier records delete <collection> <id> [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The collection and the record's id.
    @OptionGroup package var record: RecordArguments

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await RecordsCommands.run(
        .delete(collection: record.collection, id: record.id), context: context)
    }
  }
}
