/// `courier articles`, `courier outbox`, `courier sync`.
enum ArticleCommands {
  static func run(_ command: ArticlesCommand, context: CommandContext) async throws -> ExitCode {
    throw UsageError("articles is not available in this build yet.", command: "articles")
  }

  static func outbox(context: CommandContext) async throws -> ExitCode {
    throw UsageError("outbox is not available in this build yet.", command: "outbox")
  }

  static func sync(watch: Bool, context: CommandContext) async throws -> ExitCode {
    throw UsageError("sync is not available in this build yet.", command: "sync")
  }
}
