/// The `courier articles` subcommands.
package enum ArticlesCommand: Sendable, Equatable {
  /// `list [--offline]`.
  case list(offline: Bool)
  /// `add --title T [--body B]`.
  case add(title: String, body: String, attach: [String] = [])
  /// `edit ID [--title T] [--body B]`.
  case edit(id: String, title: String?, body: String?, attach: [String] = [], detach: [String] = [])
  /// `delete ID`.
  case delete(id: String)
}
