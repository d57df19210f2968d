/// `courier upload`.
enum UploadCommand {
  static func run(_ options: UploadOptions, context: CommandContext) async throws -> ExitCode {
    throw UsageError("upload is not available in this build yet.", command: "upload")
  }
}
