import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierVips

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Runs a command line against the composition root. The app's `main` is one call to this.
public struct CommandRunner: Sendable {
  /// The process environment.
  public let environment: [String: String]
  /// Where output goes.
  public let output: any CommandOutput
  /// Adapters supplied by a test or an embedding app.
  public let overrides: AdapterOverrides

  /// Creates a runner.
  /// - Parameters:
  ///   - environment: the process environment.
  ///   - output: where output goes.
  ///   - overrides: adapters to use instead of the configured ones.
  public init(
    environment: [String: String], output: any CommandOutput,
    overrides: AdapterOverrides = AdapterOverrides()
  ) {
    self.environment = environment
    self.output = output
    self.overrides = overrides
  }

  /// What `start(_:)` leaves to do.
  public enum Start: Sendable, Equatable {
    /// The command line was answered on the spot (help, version, completions, man page, a
    /// usage error): exit with this code.
    case finished(Int32)
    /// A command that needs the composition root and a task: pass it to `run(_:)`.
    case run(Invocation)
  }

  /// Parses a command line and answers it on the spot when it needs neither the composition
  /// root nor a task, so that `courier --version` starts no concurrency runtime at all.
  /// - Parameter arguments: the arguments, without the program name.
  /// - Returns: the exit code, or the invocation left to run.
  public func start(_ arguments: [String]) -> Start {
    let invocation: Invocation
    do {
      invocation = try CommandLineParser.parse(arguments)
    } catch let error as UsageError {
      output.err("courier: \(error.message)\n")
      output.err("Run 'courier \(error.command.map { "\($0) " } ?? "")--help' for usage.\n")
      return .finished(ExitCode.usage.rawValue)
    } catch {
      output.err("courier: \(error)\n")
      return .finished(ExitCode.usage.rawValue)
    }
    if let code = answer(invocation) { return .finished(code.rawValue) }
    return .run(invocation)
  }

  /// Whether a command's task should run on the calling thread (``CallingThreadExecutor``)
  /// rather than in the concurrency pool: every command but `sync` and `watch`, which may run
  /// for hours and send many writes at once. A short command on one thread starts no pool
  /// thread at all (issue 14); a transfer still waits in its adapter, not on that thread.
  /// - Parameter invocation: the parsed command line.
  /// - Returns: true for the calling thread.
  public static func runsOnCallingThread(_ invocation: Invocation) -> Bool {
    switch invocation.command {
    case .sync, .watch: false
    default: true
    }
  }

  /// Runs a command line.
  /// - Parameter arguments: the arguments, without the program name.
  /// - Returns: the exit code.
  public func run(_ arguments: [String]) async -> Int32 {
    switch start(arguments) {
    case .finished(let code): return code
    case .run(let invocation): return await run(invocation).rawValue
    }
  }

  /// The commands that only print something of the build's own, or nil for any other.
  func answer(_ invocation: Invocation) -> ExitCode? {
    switch invocation.command {
    case .help(let topic):
      guard let text = HelpText.text(for: topic) else {
        output.err("courier: no help for “\(topic ?? "")”: unknown command.\n")
        return .usage
      }
      output.out(text)
      return .success
    case .version:
      output.out((invocation.global.json ? BuildInfo.json : BuildInfo.line) + "\n")
      return .success
    case .completions(let shell):
      output.out(Completions.script(for: shell))
      return .success
    case .manpage:
      output.out(ManPage.courier)
      return .success
    default:
      return nil
    }
  }

  /// Runs a parsed command line.
  /// - Parameter invocation: the invocation.
  /// - Returns: the exit code.
  public func run(_ invocation: Invocation) async -> ExitCode {
    await run(invocation, ending: nil)
  }

  /// Runs a parsed command line and ends the process with its code while the command's session
  /// is still open: closing the store and freeing the engine and the pipeline are left to the
  /// end of the process, which needs none of it (each commit is durable when it returns, as
  /// after a `kill -9`; output went out with `write(2)`). An offline `articles add` spent a
  /// twentieth of itself there (issue 14).
  /// - Parameters:
  ///   - invocation: the invocation.
  ///   - exit: ends the process with the code (`_exit`).
  public func runAndExit(
    _ invocation: Invocation, exit: @escaping (ExitCode) -> Never
  ) async -> Never {
    exit(await run(invocation, ending: exit))
  }

  private func run(_ invocation: Invocation, ending: ((ExitCode) -> Never)?) async -> ExitCode {
    if let code = answer(invocation) { return code }
    let global = invocation.global
    let context: CommandContext
    do {
      context = try makeContext(global)
    } catch let error as ConfigError {
      return report(configError: error, json: global.json)
    } catch {
      output.err("courier: \(error)\n")
      return .config
    }
    let code = await perform(invocation.command, context: context)
    if let ending { withExtendedLifetime(context) { ending(code) } }
    return code
  }

  private func perform(_ command: Command, context: CommandContext) async -> ExitCode {
    do {
      switch command {
      case .login(let username, let password):
        return try await SessionCommands.login(
          username: username, password: password, context: context)
      case .logout:
        return try SessionCommands.logout(context: context)
      case .get(let path):
        return try await GetCommand.run(path: path, context: context)
      case .upload(let options):
        return try await UploadCommand.run(options, context: context)
      case .status:
        return try await PathCommands.status(context: context)
      case .watch:
        return try await PathCommands.watch(context: context)
      case .articles(let command):
        return try await ArticleCommands.run(command, context: context)
      case .records(let command):
        return try await RecordsCommands.run(command, context: context)
      case .outbox:
        return try await ArticleCommands.outbox(context: context)
      case .outboxRetry(let id):
        return try await ArticleCommands.retry(id: id, context: context)
      case .outboxDiscard(let id):
        return try await ArticleCommands.discard(id: id, context: context)
      case .sync(let watch):
        return try await ArticleCommands.sync(watch: watch, context: context)
      case .help, .version, .completions, .manpage:
        return .success
      }
    } catch let error as UsageError {
      output.err("courier: \(error.message)\n")
      return .usage
    } catch {
      return context.report(CourierError.wrapping(error))
    }
  }

  func makeContext(_ global: GlobalOptions) throws -> CommandContext {
    let config = try ConfigLoader.load(
      flags: global.configFlags, environment: environment, readFile: Self.readIfPresent)
    let output = self.output
    var log: (@Sendable (String) -> Void)?
    if global.verbose {
      // One line each, whatever a server or a URL put in it (no CR, LF or ESC).
      log = { line in output.err("courier: " + LogText.escaped(line) + "\n") }
    }
    var overrides = self.overrides
    // The command owns its process and exits after the upload: while libvips compresses, the
    // code of every library it has loaded leaves the resident set, not only its own
    // (decision 1408).
    overrides.compressor = overrides.compressor ?? VipsImageCompressor(codeRelease: .allLoadedCode)
    let environment = try CourierEnvironment(config: config, overrides: overrides, log: log)
    // The command owns its process and ends soon after a sync: a delivered upload's bytes
    // are freed by a detached child rather than on the way to the report (decision 1303 §3).
    let session = CourierSession(environment: environment, deliveredBodyRemoval: .detachedProcess)
    return CommandContext(
      global: global, session: session, output: output, processEnvironment: self.environment)
  }

  static func readIfPresent(_ path: String) throws -> Data? {
    try ConfigLoader.readFileIfPresent(path)
  }

  func report(configError: ConfigError, json: Bool) -> ExitCode {
    if json {
      output.out(
        JSONLine.encode([
          "status": .string("failed"), "kind": .string("config"),
          "code": .string(configError.key ?? "config"),
          "message": .string(configError.description), "attempts": .integer(0),
        ]) + "\n")
    } else {
      output.err("courier: configuration error: \(configError.description)\n")
    }
    return .config
  }
}

/// What a running command has at hand.
struct CommandContext: Sendable {
  let global: GlobalOptions
  let session: CourierSession
  let output: any CommandOutput
  let processEnvironment: [String: String]

  var environment: CourierEnvironment { session.environment }

  var client: APIClient { environment.client }

  /// Prints a failure for a person (standard error) or a script (`--json`, standard output)
  /// and returns its exit code.
  func report(_ error: CourierError) -> ExitCode {
    var error = error
    if error.kind == .unauthorized, error.code != "invalid_credentials",
      (try? environment.credentials.load()) == nil
    {
      // No session at all: "expired" would be wrong.
      error.serverMessage = nil
      error.code = error.code ?? "not_logged_in"
      return reportNotLoggedIn(error)
    }
    if global.json {
      output.out(JSONLine.encode(Self.failureObject(error)) + "\n")
    } else {
      output.err("courier: \(error.userMessage)\n")
      if global.verbose {
        output.err("courier: details: \(LogText.escaped(error.description))\n")
      }
    }
    return ExitCode.forError(error)
  }

  /// The message for a request refused because nobody is logged in.
  static let notLoggedInMessage = "You're not logged in. Run 'courier login' first."

  func reportNotLoggedIn(_ error: CourierError) -> ExitCode {
    // A session file that exists but cannot be used says so (and where), not "not logged in".
    let message = environment.credentials.unusableReason ?? Self.notLoggedInMessage
    if global.json {
      var object = Self.failureObject(error)
      object["message"] = .string(message)
      if environment.credentials.unusableReason != nil {
        object["code"] = .string("session_unreadable")
      }
      output.out(JSONLine.encode(object) + "\n")
    } else {
      output.err("courier: \(message)\n")
    }
    return .unauthorized
  }

  static func failureObject(_ error: CourierError) -> [String: JSONValue] {
    var object: [String: JSONValue] = [
      "status": .string("failed"), "kind": .string(error.kind.rawValue),
      "message": .string(error.userMessage), "attempts": .int(error.attempts),
      "code": .string(error.code ?? error.status.map { "http_\($0)" } ?? error.kind.rawValue),
    ]
    if let status = error.status { object["http_status"] = .int(status) }
    if let field = error.field { object["field"] = .string(field) }
    if let retryAfter = error.retryAfter {
      object["retry_after_seconds"] = .number(retryAfter.seconds)
    }
    return object
  }

  /// A read's snapshot as the `--json` line of `articles list` and `records list`: its source,
  /// staleness and age, its items under `items`, and what the refresh left or met.
  /// - Parameters:
  ///   - snapshot: what the read showed.
  ///   - items: the member that holds the items ("articles", "records").
  ///   - item: one item as JSON.
  /// - Returns: the object.
  static func snapshotObject<Item>(
    _ snapshot: SyncSnapshot<Item>, items: String, _ item: (SyncItem<Item>) -> JSONValue
  ) -> [String: JSONValue] {
    var object: [String: JSONValue] = [
      "source": .string(snapshot.source.rawValue), "stale": .bool(snapshot.isStale),
      items: .array(snapshot.items.map(item)),
    ]
    if let age = snapshot.age { object["age_seconds"] = .number((age * 1000).rounded() / 1000) }
    if let last = snapshot.lastRefresh {
      object["last_refresh"] = .string(RFC3339.string(from: last))
    }
    if !snapshot.deletedIDs.isEmpty { object["deleted_pending"] = .strings(snapshot.deletedIDs) }
    if !snapshot.unreadable.isEmpty { object["unreadable"] = .strings(snapshot.unreadable) }
    if snapshot.source == .network { object["not_modified"] = .bool(snapshot.notModified) }
    if let error = snapshot.error { object["error"] = .object(failureObject(error)) }
    return object
  }
}
