import ArgumentParser

extension CourierCommand {
  /// `courier outbox`: pending, rejected and conflicted writes; `retry` and `discard` act on
  /// them.
  package struct Outbox: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "outbox",
      abstract: "Show writes waiting to be sent, refused, in conflict or parked, and why.",
      usage: """
        courier outbox [<global options>]
        courier outbox retry <id> | --all [<global options>]
        courier outbox discard <id> [<global options>]
        """,
      discussion: """
        Lists the writes waiting to be sent and why each waits (the next sync sends it; sent \
        before without a reply that proved it; behind an earlier write of its record), those the \
        server refused (with its message), those in conflict with the server's version or with \
        its deletion of the record, and those parked: their replies never proved them after 3 \
        sends while the server answered, so the writes of other records went on ("waits" and \
        "waits_for" with --json). ID is the entry's number (#3 or 3) or its operation id (shown \
        with --json). A queued upload (`courier upload --queue`) shows the bytes the server \
        confirmed of its total ("upload" with --json).

        `retry` puts a refused or conflicted entry (every one with --all) back in the queue \
        under a new Idempotency-Key (the server keeps its answer under the old one), rebased on \
        the server's version for a conflict (sent as a new record when the server deleted it), \
        and a parked one under its own key (the server may hold it), then sends the queue. \
        `discard` drops the entry with every local change to its record (an article, or a \
        record of a declared collection) and shows the server's copy again (for a queued \
        upload: the entry and the bytes kept for it). The outbox holds every collection's \
        writes, in one order.

        Exit codes: 0 done (a retry that could not be sent yet is kept pending), 64 usage, \
        65 no such entry or refused again, 73/74 the local store could not be used, 75 \
        another courier is syncing this data folder.
        """ + "\n\n" + CourierCommand.globalOptionsHelp,
      subcommands: [Retry.self, Discard.self])

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await OutboxCommands.list(context: context)
    }
  }
}

extension CourierCommand.Outbox {
  /// `courier outbox retry ID|--all`.
  package struct Retry: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "retry",
      abstract: "Put a refused, conflicted or parked entry back in the queue, then send.",
      usage: "courier outbox retry <id> | --all [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The entry (#3, 3 or its operation id); none with `--all`.
    @Argument(help: ArgumentHelp("The entry: #3, 3 or its operation id.", valueName: "id"))
    package var id: String?

    /// `--all`.
    @Flag(help: "Every refused, conflicted or parked entry.") package var all = false

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      if all, let id { throw ValidationError("unexpected argument “\(id)”.") }
      guard all || id != nil else { throw ValidationError("outbox retry takes one ID, or --all.") }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await OutboxCommands.retry(id: all ? nil : id, context: context)
    }
  }

  /// `courier outbox discard ID`.
  package struct Discard: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "discard",
      abstract: "Drop an entry and show the server's copy again.",
      usage: "courier outbox discard <id> [<global options>]",
      discussion: CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The entry (#3, 3 or its operation id).
    @Argument(help: ArgumentHelp("The entry: #3, 3 or its operation id.", valueName: "id"))
    package var id: String

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await OutboxCommands.discard(id: id, context: context)
    }
  }
}

extension CourierCommand {
  /// `courier sync [--watch]`.
  package struct Sync: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "sync",
      abstract: "Send waiting writes now (or whenever the network returns, with --watch).",
      usage: "courier sync [--watch] [--allow-expensive] [<global options>]",
      discussion: """
        Sends the waiting writes now, in order, and reports what was sent, refused, in \
        conflict or still pending: every collection's (articles and those the config file \
        declares). With --watch it stays running and replays whenever the network returns, \
        until SIGINT or SIGTERM. Version conflicts follow --conflict-policy (or \
        conflict_policy in the config file, or COURIER_CONFLICT_POLICY): lastWriteWins \
        (default: the newer write wins the whole record), serverWins, manual (kept in the \
        outbox for you), or merge (field by field against the copy the edit started from: \
        fields only one side changed keep that side's value; fields both changed go to the \
        newer write). An edit of a record deleted on the server follows the same policy: \
        lastWriteWins re-creates it, serverWins drops the edit and says so, manual and merge \
        keep it in the outbox for you.

        Writes go one at a time, in the outbox's order. A write whose reply does not prove \
        the server applied it (a login page, a redirect elsewhere) stops the sync and is kept; \
        after 3 such sends, if the server answers a read of its record, it is parked and the \
        writes of other records go on (see `courier outbox`); the sync then exits 76. With replay_concurrency N in the \
        config file (or COURIER_REPLAY_CONCURRENCY, 1 to 16), writes of different records go N \
        at a time over N connections: each record's writes keep their order, the order across \
        records is lost.

        Queued uploads (and files of writes) over 1 MiB wait for a network that is not \
        metered, and every write waits while a Wi-Fi login page holds the network (the path \
        policy: writes_allowed_on, uploads_allowed_on, downloads_allowed_on, \
        large_transfer_mib in the config file); `courier outbox` says why an entry waits. \
        --allow-expensive sends them over a metered network this time.

        One courier at a time syncs a data folder (a lock, sync.lock, in it): while another \
        one does, `sync` exits 75 at once saying which process (pid) and what it runs, and \
        nothing is sent twice; `articles add/edit/delete` and `outbox retry` save the write \
        and leave the sending to it. `sync --watch` instead waits for the other one to finish \
        (saying so: a `waiting` line, or a JSON object with "status":"waiting"), then watches.
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// `--watch`.
    @Flag(help: "Stay running and replay whenever the network returns.")
    package var watch = false

    /// `--allow-expensive`.
    @Flag(
      name: .customLong("allow-expensive"),
      help: "Send queued uploads over a metered network too (allow_expensive).")
    package var allowExpensive = false

    /// `allow_expensive` with `--allow-expensive`.
    package var configFlags: [String: String] {
      allowExpensive ? ["allow_expensive": "true"] : [:]
    }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// False: it may run for hours and send many writes at once, in the pool.
    package static var runsOnCallingThread: Bool { false }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await SyncCommands.sync(watch: watch, context: context)
    }
  }
}
