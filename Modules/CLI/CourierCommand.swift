import ArgumentParser

/// `courier`, the root of the command line: swift-argument-parser's command tree. It parses the
/// global options wherever they stand (`--version` among them) and has no work of its own:
/// without a command, `CommandRunner` prints the help on standard error and exits 64.
package struct CourierCommand: AsyncParsableCommand, Sendable {
  package static let configuration = CommandConfiguration(
    commandName: "courier",
    abstract: "Talk to your server over bad networks, without losing anything.",
    usage: """
      courier [<global options>] <command> [<arguments>]
      courier --version [--json]
      """,
    discussion: """
      Every command also takes the global options, before or after its name. \
      `courier --version` (with --json, as one object) names the version and the adapters of \
      this build.

      Exit codes: 0 success, 64 usage, 65 refused by the server, 66 missing input file, \
      69 offline, host unreachable or TLS refused (an untrusted certificate, no pin matching), \
      70 unexpected failure, 73 the data folder or local store \
      cannot be created, 74 the local store cannot be read or written, 75 transient failure \
      after retries (or another courier is syncing this data folder), 76 bad reply, 77 not \
      logged in or session expired, 78 bad configuration (credentials refused over plain \
      http:// to a host other than loopback among it), 130 interrupted (SIGINT), 143 ended by \
      SIGTERM.

      TLS: certificates are always verified, against the system's trust store or --ca-bundle; \
      --pin refuses a server whose public key matches no pin; --client-certificate and \
      --client-key present a certificate for mutual TLS. The session and the password go over \
      plain http:// only to loopback (127.0.0.0/8, ::1, localhost) unless \
      --allow-insecure-http (or "allow_insecure_http": true) says otherwise.
      """,
    subcommands: [
      Login.self, Logout.self, Get.self, Upload.self, Status.self, Watch.self, Articles.self,
      Records.self, Outbox.self, Sync.self, Download.self,
    ])

  /// "courier: " before a usage error, as `courier`'s own failures say it (swift-argument-parser
  /// writes "Error: ").
  package static var _errorPrefix: String { "courier: " }

  /// The global options, parsed here wherever they stand on the line.
  @OptionGroup(title: "Global Options") package var global: GlobalOptions

  /// Creates the command's definition (swift-argument-parser's; parse to get values).
  package init() {}

  /// Run as a program of its own (`CourierCommand.main()`), `courier` with no command: the
  /// usage on standard error, exit 64. The app goes through `CommandRunner` instead.
  package func run() async throws {
    if global.version {
      print(global.versionText)
      return
    }
    throw ValidationError(Self.noCommand)
  }

  /// The last paragraph of every command's help: its global options are the root's.
  package static let globalOptionsHelp = """
    It also takes the global options (--base-url, --config, --data-dir, --transport, \
    --timeout, --max-attempts, --conflict-policy, --cache-budget-mib, --ca-bundle, --pin, \
    --client-certificate, --client-key, --allow-insecure-http, --json, --verbose, --version), \
    before or after its name: see 'courier --help'.
    """

  /// What `courier` with no command says before its usage.
  static let noCommand = "no command given."
}

/// A `courier` command that does some work: parsed by swift-argument-parser, then run by
/// `CommandRunner` with the context it makes (the configuration, the session, the output).
package protocol CourierSubcommand: AsyncParsableCommand, Sendable {
  /// The global options, the root's values.
  var global: GlobalOptions { get }

  /// Whether its task runs on the calling thread (`CallingThreadExecutor`) rather than in the
  /// concurrency pool: true for every command but `sync` and `watch`, which may run for hours
  /// and send many writes at once (decision 1407).
  static var runsOnCallingThread: Bool { get }

  /// Whether the command sends its request directly and queues nothing (`get`, `login`, an
  /// upload without `--queue`): its failure must not say the change is kept to send later.
  var queuesNothing: Bool { get }

  /// Configuration keys the command's own flags set (`--allow-expensive`: `allow_expensive`),
  /// over the global options'.
  var configFlags: [String: String] { get }

  /// Does the command's work.
  /// - Parameter context: the configuration, session and output.
  /// - Returns: the exit code.
  func run(in context: CommandContext) async throws -> ExitCode
}

extension CourierSubcommand {
  /// True: a short command starts no thread of the pool.
  package static var runsOnCallingThread: Bool { true }

  /// False: a command's writes are queued (or it sends nothing).
  package var queuesNothing: Bool { false }

  /// None: most commands' flags set no configuration key.
  package var configFlags: [String: String] { [:] }

  /// Run as swift-argument-parser runs a command (`CourierCommand.main()`): with the process's
  /// environment and standard streams, failing with the command's exit code.
  package func run() async throws {
    if global.version {
      print(global.versionText)
      return
    }
    let environment = ProcessEnvironment.current()
    let runner = CommandRunner(
      environment: environment, output: StandardOutput(environment: environment))
    let code = await runner.run(Invocation(self))
    if code != .success { throw ArgumentParser.ExitCode(code.rawValue) }
  }
}
