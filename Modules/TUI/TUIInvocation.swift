/// What `courier-tui`'s command line asks for.
public enum TUIInvocation: Sendable, Hashable {
  /// Print the help and exit 0.
  case help
  /// Print the version and exit 0.
  case version
  /// Print the completion script for a shell (`bash`, `zsh` or `fish`) and exit 0 (hidden:
  /// what `scripts/install` runs).
  case completions(shell: String)
  /// Print the man page in roff and exit 0 (hidden: what `scripts/install` runs).
  case manpage
  /// Run the interface.
  /// - Parameters:
  ///   - flags: configuration values by `ConfigLoader` key (`base_url`, `data_dir`, `config`).
  ///   - demo: whether to run against the labelled demo data instead of the real core.
  case run(flags: [String: String], demo: Bool)
}
