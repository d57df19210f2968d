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
  /// `courier upload FILE ...`.
  case upload(UploadOptions)
  /// `courier status`: the network path once, and why.
  case status
  /// `courier watch`: every change of the network path until interrupted.
  case watch
  /// `courier articles ...`.
  case articles(ArticlesCommand)
  /// `courier outbox`: pending, rejected and conflicted writes.
  case outbox
  /// `courier outbox retry ID|--all`: refused or conflicted entries back in the queue (nil:
  /// all of them), then a replay.
  case outboxRetry(id: String?)
  /// `courier outbox discard ID`: drop an entry and restore the server's copy of its record.
  case outboxDiscard(id: String)
  /// `courier sync [--watch]`.
  case sync(watch: Bool)
}

/// The options of `courier upload`.
public struct UploadOptions: Sendable, Equatable {
  /// The file to send.
  public var file: String
  /// `--title`.
  public var title: String?
  /// `--field NAME=VALUE`, in order.
  public var fields: [Field] = []
  /// `--to URL` (default: BASE_URL/photos).
  public var target: String?
  /// `--max-pixels N`: the longest edge after downsampling.
  public var maxPixels: Int?
  /// `--quality Q`: JPEG quality, 1...100 or 0.01...1.0.
  public var quality: Int?
  /// `--no-compress`.
  public var noCompress = false

  /// One extra text field.
  public struct Field: Sendable, Equatable {
    /// The name.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a field.
    /// - Parameters:
    ///   - name: the name.
    ///   - value: the value.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// Creates options for a file.
  /// - Parameter file: the file.
  public init(file: String) { self.file = file }
}

/// The `courier articles` subcommands.
public enum ArticlesCommand: Sendable, Equatable {
  /// `list [--offline]`.
  case list(offline: Bool)
  /// `add --title T [--body B]`.
  case add(title: String, body: String)
  /// `edit ID [--title T] [--body B]`.
  case edit(id: String, title: String?, body: String?)
  /// `delete ID`.
  case delete(id: String)
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
