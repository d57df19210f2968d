import CourierCore
import CourierDomain
import CourierLinux

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier login` and `courier logout`.
enum SessionCommands {
  static func login(username: String, password source: PasswordSource, context: CommandContext)
    async throws -> ExitCode
  {
    let password: String
    switch source {
    case .argument(let value):
      // Every user of the machine can read a process's arguments (ps, /proc/PID/cmdline).
      context.output.err(
        "courier: warning: --password on the command line is visible to other users in the "
          + "process list; use --password-stdin or COURIER_PASSWORD.\n")
      password = value
    case .environment:
      guard let value = context.processEnvironment["COURIER_PASSWORD"], !value.isEmpty else {
        throw UsageError(
          "login needs a password: --password, --password-stdin or COURIER_PASSWORD.",
          command: "login")
      }
      password = value
    case .standardInput:
      guard let text = context.output.readStandardInput(),
        let line = firstLine(text), !line.isEmpty
      else {
        throw UsageError("no password on standard input.", command: "login")
      }
      password = line
    }
    try await context.session
      .login(username: username, password: password)
    if context.global.json {
      context.output.out(
        JSONLine.encode(["status": .string("ok"), "username": .string(username)]) + "\n")
    } else {
      context.output.out("Logged in as \(username).\n")
    }
    return .success
  }

  /// The first line of standard input, without its line ending (LF or CR LF); nil when the
  /// input is empty. Spaces are kept: they may be part of the password.
  static func firstLine(_ text: String) -> String? {
    guard !text.isEmpty else { return nil }
    var line = Substring(text)
    if let newline = line.firstIndex(where: { $0 == "\n" || $0 == "\r\n" }) {
      line = line[..<newline]
    }
    if line.hasSuffix("\r") { line = line.dropLast() }
    return String(line)
  }

  static func logout(context: CommandContext) throws -> ExitCode {
    try context.environment.credentials.clear()
    if context.global.json {
      context.output.out(JSONLine.encode(["status": .string("ok")]) + "\n")
    } else {
      context.output.out("Logged out.\n")
    }
    return .success
  }
}
