/// The version of Courier's tools, `courier` and `courier-tui` (the one place it is written):
/// what `--version`, the man pages and `scripts/install` print.
package enum ToolsVersion {
  /// The version, e.g. `0.1.0`.
  package static let current = "0.1.0"
}
