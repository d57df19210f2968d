import ArgumentParser
import CoreMetrics
import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSystem
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Runs a command line against the composition root. The app's `main` is one call to this.
package struct CommandRunner: Sendable {
  /// The process environment.
  package let environment: [String: String]
  /// Where output goes.
  package let output: any CommandOutput
  /// Adapters supplied by a test or an embedding app.
  package let overrides: AdapterOverrides

  /// Creates a runner.
  /// - Parameters:
  ///   - environment: the process environment.
  ///   - output: where output goes.
  ///   - overrides: adapters to use instead of the configured ones.
  package init(
    environment: [String: String], output: any CommandOutput,
    overrides: AdapterOverrides = AdapterOverrides()
  ) {
    self.environment = environment
    self.output = output
    self.overrides = overrides
  }

  /// What `start(_:)` leaves to do.
  package enum Start: Sendable {
    /// The command line was answered on the spot (help, version, completion scripts, a usage
    /// error): exit with this code.
    case finished(Int32)
    /// A command that needs the composition root and a task: pass it to `run(_:)`.
    case run(Invocation)
  }

  /// Parses a command line with swift-argument-parser and answers it on the spot when it needs
  /// neither the composition root nor a task (`--help`, `help`, `--version`,
  /// `--generate-completion-script`, `--experimental-dump-help`, a usage error), so that
  /// `courier --version` starts no concurrency runtime at all.
  /// - Parameter arguments: the arguments, without the program name.
  /// - Returns: the exit code, or the invocation left to run.
  package func start(_ arguments: [String]) -> Start {
    do {
      var parsed = try Self.parse(arguments)
      if let command = parsed as? any CourierSubcommand {
        if command.global.version { return .finished(version(command.global)) }
        return .run(Invocation(command))
      }
      if let root = parsed as? CourierCommand {
        if root.global.version { return .finished(version(root.global)) }
        // `courier` alone: a usage error (64), with the whole help (the commands to choose
        // from) on standard error, where a usage error's words go.
        output.err(
          "courier: \(CourierCommand.noCommand)\n\n" + CourierCommand.helpMessage() + "\n")
        return .finished(ExitCode.usage.rawValue)
      }
      if let group = parsed as? any SubcommandGroup {
        if group.global.version { return .finished(version(group.global)) }
        let name = type(of: parsed)._commandName
        output.err(
          "courier: \(type(of: group).missingSubcommand)\n"
            + "  See 'courier \(name) --help' for more information.\n")
        return .finished(ExitCode.usage.rawValue)
      }
      // swift-argument-parser's own commands (`help`) answer by throwing.
      try parsed.run()
      return .finished(ExitCode.success.rawValue)
    } catch {
      return .finished(report(error))
    }
  }

  /// Parses a command line into the command it names, or throws what swift-argument-parser
  /// reports (a usage error, or a request for help, the version or a completion script).
  /// `records COLLECTION SUBCOMMAND` is parsed as `records SUBCOMMAND COLLECTION` (decision
  /// 1203), tried only when the line as typed fails.
  /// - Parameter arguments: the arguments, without the program name.
  /// - Returns: the parsed command.
  /// - Throws: the parser's error for the line as typed, or for the line turned around when
  ///   that is what it meant.
  package static func parse(_ arguments: [String]) throws -> any ParsableCommand {
    do {
      return try CourierCommand.parseAsRoot(arguments)
    } catch {
      guard let swapped = CourierCommand.Records.collectionFirst(arguments) else { throw error }
      return try CourierCommand.parseAsRoot(swapped)
    }
  }

  /// Prints `--version`'s answer (wherever it stood: the root parses the global options
  /// anywhere on the line) and returns 0.
  func version(_ global: GlobalOptions) -> Int32 {
    output.out(global.versionText + "\n")
    return ExitCode.success.rawValue
  }

  /// Prints what swift-argument-parser says for an error (standard output for help, the
  /// version and completion scripts; standard error for a usage error) and returns its exit
  /// code: 0, or 64 (EX_USAGE) for a usage error.
  func report(_ error: any Error) -> Int32 {
    let code = CourierCommand.exitCode(for: error)
    let text = CourierCommand.fullMessage(for: error)
    let line = text.isEmpty || text.hasSuffix("\n") ? text : text + "\n"
    if code == .success {
      output.out(line)
    } else {
      output.err(line)
    }
    return code.rawValue
  }

  /// Runs a command line.
  /// - Parameter arguments: the arguments, without the program name.
  /// - Returns: the exit code.
  package func run(_ arguments: [String]) async -> Int32 {
    switch start(arguments) {
    case .finished(let code): return code
    case .run(let invocation): return await run(invocation).rawValue
    }
  }

  /// Runs a parsed command line.
  /// - Parameter invocation: the invocation.
  /// - Returns: the exit code.
  package func run(_ invocation: Invocation) async -> ExitCode {
    await run(invocation, ending: nil)
  }

  /// Runs a parsed command line and ends the process with its code while the command's session
  /// is still open: closing the store and freeing the engine and the pipeline are left to the
  /// end of the process, which needs none of it (each commit is durable when it returns, as
  /// after a `kill -9`; output went out with `write(2)`). An offline `articles add` spent a
  /// twentieth of itself there.
  /// - Parameters:
  ///   - invocation: the invocation.
  ///   - exit: ends the process with the code (`_exit`).
  package func runAndExit(
    _ invocation: Invocation, exit: @escaping (ExitCode) -> Never
  ) async -> Never {
    exit(await run(invocation, ending: exit))
  }

  private func run(_ invocation: Invocation, ending: ((ExitCode) -> Never)?) async -> ExitCode {
    let global = invocation.global
    let context: CommandContext
    do {
      context = try makeContext(global, command: invocation.command.configFlags)
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

  private func perform(_ command: any CourierSubcommand, context: CommandContext) async -> ExitCode
  {
    do {
      return try await command.run(in: context)
    } catch let error as UsageError {
      output.err("courier: \(error.message)\n")
      return .usage
    } catch {
      return context.report(CourierError.wrapping(error), direct: command.queuesNothing)
    }
  }

  func makeContext(_ global: GlobalOptions, command flags: [String: String] = [:]) throws
    -> CommandContext
  {
    let config = try ConfigLoader.load(
      flags: global.configFlags.merging(flags) { _, command in command }, environment: environment,
      readFile: Self.readIfPresent)
    // `--verbose` is a log handler writing each exchange and retry decision to standard
    // error; without it the library logs nowhere. No metrics backend is bundled: the command
    // records none, and says so rather than asking the global system (decision 2203).
    let logger =
      global.verbose ? VerboseLogHandler.logger(writingTo: output) : Logger.courierDiscarding
    let environment = try CourierEnvironment(
      config: config, overrides: overrides, logger: logger, metrics: NOOPMetricsHandler.instance)
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
package struct CommandContext: Sendable {
  let global: GlobalOptions
  let session: CourierSession
  let output: any CommandOutput
  let processEnvironment: [String: String]

  var environment: CourierEnvironment { session.environment }

  var client: APIClient { environment.client }

  /// Prints a failure for a person (standard error) or a script (`--json`, standard output)
  /// and returns its exit code.
  /// - Parameters:
  ///   - error: the failure.
  ///   - direct: the request was sent directly, nothing queued (an upload without `--queue`, a
  ///     `get`, a login): its message promises nothing is kept to send later.
  /// - Returns: the exit code.
  func report(_ error: CourierError, direct: Bool = false) -> ExitCode {
    var error = error
    if error.kind == .unauthorized, error.code != "invalid_credentials",
      (try? environment.credentials.load()) == nil
    {
      // No session at all: "expired" would be wrong.
      error.serverMessage = nil
      error.code = error.code ?? "not_logged_in"
      return reportNotLoggedIn(error)
    }
    let message = direct ? UserMessages.message(forDirect: error) : error.userMessage
    if global.json {
      var object = Self.failureObject(error)
      object["message"] = .string(message)
      output.out(JSONLine.encode(object) + "\n")
    } else {
      // A message may name a file or carry a server's words: printed as untrusted text.
      output.err("courier: \(LogText.escaped(message))\n")
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
      object["retry_after_seconds"] = .double(retryAfter.seconds)
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
    if let age = snapshot.age { object["age_seconds"] = .double((age * 1000).rounded() / 1000) }
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
