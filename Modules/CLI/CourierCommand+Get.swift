import ArgumentParser

extension CourierCommand {
  /// `courier get PATH`.
  package struct Get: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Send a GET through the whole pipeline and print the body.",
      usage: "courier get <path> [<global options>]",
      discussion: """
        Sends GET PATH (relative to the base URL) through the whole pipeline (auth, retries \
        with backoff, error classification) and prints the body, or the reason it failed. A \
        full URL is accepted only on the base URL's server (same scheme, host and port): the \
        session's token is never sent anywhere else; use --base-url for another server.

        Replies the server lets a client keep are kept in the data folder's cache (at most \
        --cache-budget-mib, default 512): online a kept reply is revalidated (a 304 costs no \
        body), offline the last good body is printed and standard error says how old it is \
        ("Offline: showing the copy from 3 minutes ago."; with --json, "cache":"stale" and \
        "age_seconds").
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The path (or a full URL on the base URL's server).
    @Argument(help: ArgumentHelp("The path, relative to the base URL.", valueName: "path"))
    package var path: String

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// True: a GET is sent now or not at all.
    package var queuesNothing: Bool { true }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await GetCommand.run(path: path, context: context)
    }
  }
}
