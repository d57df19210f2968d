import Foundation

/// Options every command accepts.
public struct GlobalOptions: Sendable, Equatable {
  /// `--base-url`.
  public var baseURL: String?
  /// `--config`.
  public var configFile: String?
  /// `--data-dir`.
  public var dataDir: String?
  /// `--transport`.
  public var transport: String?
  /// `--timeout` in seconds (per attempt).
  public var timeout: String?
  /// `--max-attempts`.
  public var maxAttempts: String?
  /// `--json`: one JSON object per line, for scripts.
  public var json = false
  /// `--verbose`: each request and retry decision on standard error.
  public var verbose = false

  /// Creates defaults.
  public init() {}

  /// The values that map to configuration keys.
  public var configFlags: [String: String] {
    var flags: [String: String] = [:]
    flags["base_url"] = baseURL
    flags["config"] = configFile
    flags["data_dir"] = dataDir
    flags["transport"] = transport
    flags["timeout_seconds"] = timeout
    flags["max_attempts"] = maxAttempts
    return flags
  }
}

/// Where `courier login` takes the password from.
public enum PasswordSource: Sendable, Equatable {
  /// `--password P`.
  case argument(String)
  /// `--password-stdin`, or standard input when not a terminal.
  case standardInput
  /// `COURIER_PASSWORD`.
  case environment
}

/// A parsed command.
public enum Command: Sendable, Equatable {
  /// `courier help [COMMAND]`, `--help`.
  case help(topic: String?)
  /// `courier --version`.
  case version
  /// `courier login --username U [--password P | --password-stdin]`.
  case login(username: String, password: PasswordSource)
  /// `courier logout`.
  case logout
  /// `courier get PATH`.
  case get(path: String)
}

/// A whole command line, parsed.
public struct Invocation: Sendable, Equatable {
  /// Global options.
  public var global: GlobalOptions
  /// The command.
  public var command: Command

  /// Creates an invocation.
  /// - Parameters:
  ///   - global: global options.
  ///   - command: the command.
  public init(global: GlobalOptions, command: Command) {
    self.global = global
    self.command = command
  }
}

/// A command line that cannot be understood: exit 64 with this message and the command's usage.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong.
  public var message: String
  /// The command whose usage to show, if known.
  public var command: String?

  /// Creates an error.
  /// - Parameters:
  ///   - message: what is wrong.
  ///   - command: the command concerned.
  public init(_ message: String, command: String? = nil) {
    self.message = message
    self.command = command
  }

  /// The message.
  public var description: String { message }
}
