import ArgumentParser

extension CourierCommand {
  /// `courier status`: the network path once, and why.
  package struct Status: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Print the network path now, and why.",
      usage: "courier status [--no-probe] [<global options>]",
      discussion: """
        Prints the network path once (satisfied, unsatisfied, requiresConnection, \
        captivePortal or unknown) and why: each interface, its addresses and whether a default \
        route goes through it, and what NetworkManager or systemd-networkd says. On a usable \
        path it then asks Courier's captive-portal probe once (portal_probe_url, by default \
        the server's GET /health, within 5 s; first the RFC 8908 captive-portal API the \
        configuration or the network's DHCP lease names), so that it can say a login page \
        holds the network ("probe" with --json). --no-probe, or portal_probe_url set to none, \
        skips that request.
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// `--no-probe`.
    @Flag(
      name: .customLong("no-probe"),
      help: "Do not ask the captive-portal probe (no request is sent).")
    package var noProbe = false

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await PathCommands.status(probing: !noProbe, context: context)
    }
  }

  /// `courier watch`: every change of the network path until interrupted.
  package struct Watch: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "watch",
      abstract: "Print every change of the network path until interrupted.",
      usage: "courier watch [<global options>]",
      discussion: """
        Prints every change of the network path, one line each with a timestamp and the \
        monitor's generation, until interrupted (SIGINT or SIGTERM end it cleanly).
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    /// False: it runs until interrupted, in the pool.
    package static var runsOnCallingThread: Bool { false }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await PathCommands.watch(context: context)
    }
  }
}
