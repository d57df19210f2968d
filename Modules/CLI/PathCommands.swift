/// `courier status` and `courier watch`.
enum PathCommands {
  static func status(context: CommandContext) async throws -> ExitCode {
    throw UsageError("status is not available in this build yet.", command: "status")
  }

  static func watch(context: CommandContext) async throws -> ExitCode {
    throw UsageError("watch is not available in this build yet.", command: "watch")
  }
}
