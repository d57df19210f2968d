import CourierDomain
import CourierLinux

extension CommandContext {
  /// Told when the data folder's permissions were tightened as the local store opened: a
  /// warning on standard error.
  var warn: @Sendable (String) -> Void {
    let output = output
    return { output.err("courier: warning: \($0)\n") }
  }

  /// The session's outbox, opening the local store (with ``warn``) if nothing has yet.
  /// - Returns: the outbox.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  func openOutbox() throws -> SessionOutbox { try session.outbox(warn: warn) }

  /// Refuses what the command was asked to do, in words (standard error) or as the `--json`
  /// failure object (kind `invalidInput`, no attempt made).
  /// - Parameters:
  ///   - message: what is wrong, for a person.
  ///   - code: the failure's code for a script.
  ///   - exit: the exit code.
  /// - Returns: `exit`.
  func refuse(_ message: String, code: String, exit: ExitCode) -> ExitCode {
    if global.json {
      output.out(
        JSONLine.encode([
          "status": .string("failed"), "kind": .string("invalidInput"), "code": .string(code),
          "message": .string(message), "attempts": .integer(0),
        ]) + "\n")
    } else {
      output.err("courier: \(message)\n")
    }
    return exit
  }
}
