import ArgumentParser

extension CourierCommand {
  /// `courier login --username USER [--password-stdin | --password PASSWORD]`.
  package struct Login: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "login",
      abstract: "Log in and keep the session in the data directory.",
      usage: """
        courier login --username <user> [--password-stdin | --password <password>]
          [<global options>]
        """,
      discussion: """
        Logs in with POST /auth/token and keeps the tokens in DATA_DIR/session.json (mode \
        0600). The password comes from the first line of standard input (--password-stdin), \
        from the COURIER_PASSWORD environment variable, or from --password, which other users \
        can read in the process list (courier warns): prefer --password-stdin.

        Example:
          printf '%s\\n' "$PASSWORD" | courier login --username alice --password-stdin
        """ + "\n\n" + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// `--username`: required (checked by `validate()`, in today's words).
    @Option(parsing: .unconditional, help: ArgumentHelp("The user name.", valueName: "user"))
    package var username: String?

    /// `--password`.
    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The password (visible in the process list).", valueName: "password"))
    package var password: String?

    /// `--password-stdin`.
    @Flag(help: "Read the password from the first line of standard input.")
    package var passwordStdin = false

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func validate() throws {
      guard let username, !username.isEmpty else {
        throw ValidationError("login needs --username.")
      }
      if password != nil && passwordStdin {
        throw ValidationError("give --password or --password-stdin, not both.")
      }
    }

    /// Where the password comes from.
    package var passwordSource: PasswordSource {
      if let password { return .argument(password) }
      return passwordStdin ? .standardInput : .environment
    }

    /// True: a login is sent now or not at all.
    package var queuesNothing: Bool { true }

    package func run(in context: CommandContext) async throws -> ExitCode {
      try await SessionCommands.login(
        username: username ?? "", password: passwordSource, context: context)
    }
  }

  /// `courier logout`.
  package struct Logout: CourierSubcommand {
    package static let configuration = CommandConfiguration(
      commandName: "logout",
      abstract: "Forget the session.",
      usage: "courier logout [<global options>]",
      discussion: "Forgets the session kept by `courier login`." + "\n\n"
        + CourierCommand.globalOptionsHelp)

    /// The root command, whose global options this command takes.
    @ParentCommand package var root: CourierCommand

    /// The global options, the root's values.
    package var global: GlobalOptions { root.global }

    /// Creates the command's definition (swift-argument-parser's; parse to get values).
    package init() {}

    package func run(in context: CommandContext) async throws -> ExitCode {
      try SessionCommands.logout(context: context)
    }
  }
}
