import ArgumentParser

extension CourierCommand {
  /// `courier download PATH [--output FILE]`.
  package struct Download: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "download",
      abstract: "Download a file from the server into a file, resuming after a kill.",
      usage:
        "courier download <path> [--output <file>] [--pin-cached | --unpin-cached] [<global options>]",
      discussion: """
        Downloads PATH (relative to the base URL, or a full URL on the base URL's server) \
        through the whole pipeline (auth, retries). Without --output the finished file is kept \
        in Courier's response cache (managed by Courier: under the cache budget, evicted least \
        recently used unless pinned with --pin-cached; --unpin-cached lets it go) and its path there is printed; a second run \
        asks the server whether it changed (If-None-Match, else If-Modified-Since) and \
        downloads only a new version; offline it prints the cached file and its age. \
        --output FILE writes a copy the user owns, outside the cache. The body is written as it arrives to \
        a partial file beside FILE; run the same command again after a kill or a dropped link \
        and it continues where it stopped (Range and If-Range), or starts again when the file \
        changed on the server. When the server sends Repr-Digest, the whole file is checked \
        against it; a file that does not match is deleted. FILE appears only when complete. \
        A download you run is never held by the network path: over a metered or data-saving \
        network a file over 1 MiB (large_transfer_mib) is downloaded at once with a one-line \
        note saying so and its size on standard error.
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

    /// Pins (`--pin-cached`) or unpins (`--unpin-cached`) the cached file: a pinned one is never evicted.
    @Flag(exclusivity: .chooseLast)
    package var pinning: Pinning?

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// True: the download runs now or not at all.
    package var queuesNothing: Bool { true }

    /// `--pin-cached` or `--unpin-cached` (`--pin` is the global option pinning the server's
    /// public key).
    package enum Pinning: String, EnumerableFlag, Sendable {
      /// Keeps the cached file out of eviction.
      case pinCached
      /// Lets the cached file be evicted again.
      case unpinCached

      /// Each flag's help.
      package static func help(for value: Pinning) -> ArgumentHelp? {
        value == .pinCached
          ? "Keep the cached file out of the budget's eviction."
          : "Let a pinned cached file be evicted again."
      }
    }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await DownloadCommand.run(
        path: path, output: output, pin: pinning.map { $0 == .pinCached }, context: context)
    }
  }
}
