import ArgumentParser

extension CourierCommand {
  /// `courier download PATH [--output FILE]`.
  package struct Download: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "download",
      abstract: "Download a file from the server into a file, resuming after a kill.",
      usage: "courier download <path> [--output <file>] [<global options>]",
      discussion: """
        Downloads PATH (relative to the base URL, or a full URL on the base URL's server) \
        through the whole pipeline (auth, retries) into FILE, by default \
        <data directory>/downloads/<last path segment>. The body is written as it arrives to \
        a partial file beside FILE; run the same command again after a kill or a dropped link \
        and it continues where it stopped (Range and If-Range), or starts again when the file \
        changed on the server. When the server sends Repr-Digest, the whole file is checked \
        against it; a file that does not match is deleted. FILE appears only when complete.
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// The path (or a full URL on the base URL's server).
    @Argument(help: ArgumentHelp("The path, relative to the base URL.", valueName: "path"))
    package var path: String

    /// Where the file goes; the data directory's downloads/ folder by default.
    @Option(
      name: [.short, .long],
      help: ArgumentHelp(
        "The file to write (default: the data directory's downloads/).",
        valueName: "file"))
    package var output: String?

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// True: the download runs now or not at all.
    package var queuesNothing: Bool { true }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await DownloadCommand.run(path: path, output: output, context: context)
    }
  }
}
