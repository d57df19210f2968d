import ArgumentParser

extension CourierCommand {
  /// `courier articles list|add|edit|delete`: needs one of its subcommands.
  package struct Articles: ParsableCommand, SubcommandGroup {
    package static let configuration = CommandConfiguration(
      commandName: "articles",
      abstract: "List, add, edit or delete articles (offline first).",
      usage: """
        courier articles list [--offline] [<global options>]
        courier articles add --title <t> [--body <b>] [<global options>]
        courier articles edit <id> [--title <t>] [--body <b>] [<global options>]
        courier articles delete <id> [<global options>]
        """,
      discussion: """
        The local store is the source of truth. `list` prints the cached articles at once \
        (marked with their age), then refreshes them (unless --offline); a failed refresh \
        keeps the cache. `add`, `edit` and `delete` apply the change locally, queue it in the \
        outbox, try to send it, and print what is still pending; a write queued while offline \
        exits 0 (it is saved). With --json, `list` prints a {"source":"cache",...} line, then \
        a {"source":"network",...} line (with "error" when the refresh failed, the exit code \
        then says why).
        """ + "\n\n" + CourierCommand.globalOptionsHelp,
      subcommands: [List.self, Add.self, Edit.self, Delete.self])

    static let missingSubcommand = "articles needs a subcommand: list, add, edit or delete."

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}
  }
}

extension CourierCommand.Articles {
  /// `courier articles list [--offline]`.
  package struct List: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "The cached articles at once, then refreshed.",
      usage: "courier articles list [--offline] [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// `--offline`.
    @Flag(help: "Only the cache: no refresh.") package var offline = false

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await ArticleCommands.run(.list(offline: offline), context: context)
    }
  }

  /// `courier articles add --title T [--body B]`.
  package struct Add: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "add",
      abstract: "Add an article (saved locally, then sent).",
      usage:
        "courier articles add --title <t> [--body <b>] [--attach photo=<file>] [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// `--title`: required (checked by `validate()`, in today's words).
    @Option(parsing: .unconditional, help: ArgumentHelp("The title.", valueName: "t")) package
      var title: String?

    /// `--body`.
    @Option(parsing: .unconditional, help: ArgumentHelp("The body.", valueName: "b")) package
      var body: String?

    /// `--attach FIELD=FILE`: a file for an attachment field, sent before the article.
    @Option(
      parsing: .unconditionalSingleValue,
      help: ArgumentHelp(
        "A file for an attachment field (photo=./sunset.jpg), sent first.",
        valueName: "field=file")) package var attach: [String] = []

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      guard title != nil else { throw ValidationError("articles add needs --title.") }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await ArticleCommands.run(
        .add(title: title ?? "", body: body ?? "", attach: attach), context: context)
    }
  }

  /// `courier articles edit ID [--title T] [--body B]`.
  package struct Edit: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "edit",
      abstract: "Change an article's title or body.",
      usage: "courier articles edit <id> [--title <t>] [--body <b>] [--attach photo=<file>] "
        + "[--detach photo] [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The article's id.
    @Argument(help: ArgumentHelp("The article's id.", valueName: "id")) package var id: String

    /// `--title`.
    @Option(parsing: .unconditional, help: ArgumentHelp("The new title.", valueName: "t")) package
      var title: String?

    /// `--body`.
    @Option(parsing: .unconditional, help: ArgumentHelp("The new body.", valueName: "b")) package
      var body: String?

    /// `--attach FIELD=FILE`: a new file for an attachment field.
    @Option(
      parsing: .unconditionalSingleValue,
      help: ArgumentHelp(
        "A new file for an attachment field (photo=./sunset.jpg), sent first.",
        valueName: "field=file")) package var attach: [String] = []

    /// `--detach FIELD`: removes an attachment field's file from the article.
    @Option(
      parsing: .unconditionalSingleValue,
      help: ArgumentHelp("Remove an attachment field's file (photo).", valueName: "field"))
    package var detach: [String] = []

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      guard title != nil || body != nil || !attach.isEmpty || !detach.isEmpty else {
        throw ValidationError("articles edit needs --title, --body, --attach or --detach.")
      }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await ArticleCommands.run(
        .edit(id: id, title: title, body: body, attach: attach, detach: detach), context: context)
    }
  }

  /// `courier articles delete ID`.
  package struct Delete: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Delete an article.", usage: "courier articles delete <id> [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The article's id.
    @Argument(help: ArgumentHelp("The article's id.", valueName: "id")) package var id: String

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await ArticleCommands.run(.delete(id: id), context: context)
    }
  }
}

/// A command that only groups subcommands (`articles`, `records`): given alone it is a usage
/// error in its own words (swift-argument-parser would print its help and exit 0).
protocol SubcommandGroup {
  /// What is missing, for the usage error.
  static var missingSubcommand: String { get }

  /// The global options, the root's values.
  var global: GlobalOptions { get }
}
