import CourierPorts

/// Parses `courier-tui`'s arguments: the same configuration flags as `courier`, so both read
/// one configuration (defaults, then the file, then `COURIER_*`, then these flags).
public enum TUICommandLine {
  /// The exit status for a usage error (BSD `EX_USAGE`).
  public static let usageExitCode: Int32 = 64

  /// Writes a message to standard error, whole, giving up quietly when it is closed (the app's
  /// usage errors and failures before the terminal is taken).
  /// - Parameter text: the text, newline included.
  public static func writeError(_ text: String) {
    OpenFile.writeAll(text, to: 2)
  }

  /// The help text, its options from `TUIOptionTable`.
  public static var help: String {
    let width = TUIOptionTable.options.map { label($0).count }.max() ?? 0
    let lines = TUIOptionTable.options.map { option in
      let text = label(option)
      return "  " + text + String(repeating: " ", count: width - text.count + 3) + option.summary
    }
    return """
      Usage: courier-tui [--base-url URL] [--data-dir DIR] [--config FILE] [--demo]
             courier-tui --version

      \(description)

      Options:
      \(lines.joined(separator: "\n"))

      Sign in first with `courier login`, or set COURIER_TOKEN.
      """
  }

  /// What the program is, for the help and the man page.
  public static let description = """
    The full-screen Courier interface: your articles (cached first, then refreshed), the
    pending changes, the network state, and photo uploads. It needs a terminal.
    """

  /// `--data-dir DIR`, `-h, --help`: how the help names an option.
  static func label(_ option: TUIOptionTable.Option) -> String {
    var text = option.short.map { "\($0), " } ?? ""
    text += option.name
    if let value = option.value { text += " " + value }
    return text
  }

  /// Parses the arguments (without the program name).
  /// - Parameter arguments: the arguments.
  /// - Returns: what to do.
  /// - Throws: `TUIUsageError` for an unknown option, a missing or empty value, or a repeat.
  public static func parse(_ arguments: [String]) throws -> TUIInvocation {
    if let first = arguments.first, TUIOptionTable.hiddenCommands.contains(first) {
      return try hidden(first, Array(arguments.dropFirst()))
    }
    var flags: [String: String] = [:]
    var demo = false
    var version = false
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "-h" || argument == "--help" { return .help }
      if argument == "--demo" {
        demo = true
        continue
      }
      if argument == "--version" {
        version = true
        continue
      }
      var name = argument
      var value: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        value = String(argument[argument.index(after: equals)...])
      }
      guard let key = TUIOptionTable.option(named: name)?.configKey else {
        if argument.hasPrefix("-") {
          throw TUIUsageError(message: "unknown option “\(argument)”.")
        }
        throw TUIUsageError(message: "unexpected argument “\(argument)”.")
      }
      if value == nil {
        guard index < arguments.count else {
          throw TUIUsageError(message: "\(name) needs a value.")
        }
        value = arguments[index]
        index += 1
      }
      guard let value, !value.isEmpty else {
        throw TUIUsageError(message: "\(name) needs a non-empty value.")
      }
      guard flags[key] == nil else {
        throw TUIUsageError(message: "\(name) is given twice.")
      }
      flags[key] = value
    }
    return version ? .version : .run(flags: flags, demo: demo)
  }

  /// `completions SHELL` and `manpage`.
  static func hidden(_ command: String, _ arguments: [String]) throws -> TUIInvocation {
    if command == "manpage" {
      guard arguments.isEmpty else {
        throw TUIUsageError(message: "manpage takes no argument.")
      }
      return .manpage
    }
    guard arguments.count == 1, let shell = arguments.first,
      TUIOptionTable.shells.contains(shell)
    else {
      throw TUIUsageError(
        message: "completions takes one SHELL: \(TUIOptionTable.shells.joined(separator: ", ")).")
    }
    return .completions(shell: shell)
  }
}
