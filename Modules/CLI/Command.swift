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
  /// `courier records ...`: the records of a declared collection.
  case records(RecordsCommand)
  /// `courier outbox`: pending, rejected and conflicted writes.
  case outbox
  /// `courier outbox retry ID|--all`: refused or conflicted entries back in the queue (nil:
  /// all of them), then a replay.
  case outboxRetry(id: String?)
  /// `courier outbox discard ID`: drop an entry and restore the server's copy of its record.
  case outboxDiscard(id: String)
  /// `courier sync [--watch]`.
  case sync(watch: Bool)
  /// `courier completions bash|zsh|fish` (hidden): the shell's completion script.
  case completions(CompletionShell)
  /// `courier manpage` (hidden): the man page, in roff.
  case manpage
}
