/// Parses `courier-tui`'s arguments: the same configuration flags as `courier`, so both read
/// one configuration (defaults, then the file, then `COURIER_*`, then these flags).
public enum TUICommandLine {
  /// The exit status for a usage error (BSD `EX_USAGE`).
  public static let usageExitCode: Int32 = 64

  /// The help text.
  public static let help = """
    Usage: courier-tui [--base-url URL] [--data-dir DIR] [--config FILE] [--demo]

    The full-screen Courier interface: your articles (cached first, then refreshed), the
    pending changes, the network state, and photo uploads. It needs a terminal.

    Options:
      --base-url URL   the server (else COURIER_BASE_URL, the config file, http://127.0.0.1:8080)
      --data-dir DIR   where the local store and the session live (else COURIER_DATA_DIR)
      --config FILE    the JSON configuration file (else ~/.config/courier/config.json)
      --demo           run on demo data, touching no network and no disk
      -h, --help       show this help

    Sign in first with `courier login`, or set COURIER_TOKEN.
    """

  private static let valued: [String: String] = [
    "--base-url": "base_url", "--data-dir": "data_dir", "--config": "config",
  ]

  /// Parses the arguments (without the program name).
  /// - Parameter arguments: the arguments.
  /// - Returns: what to do.
  /// - Throws: `TUIUsageError` for an unknown option, a missing or empty value, or a repeat.
  public static func parse(_ arguments: [String]) throws -> TUIInvocation {
    var flags: [String: String] = [:]
    var demo = false
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "-h" || argument == "--help" { return .help }
      if argument == "--demo" {
        demo = true
        continue
      }
      var name = argument
      var value: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        value = String(argument[argument.index(after: equals)...])
      }
      guard let key = valued[name] else {
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
    return .run(flags: flags, demo: demo)
  }
}
