/// The `courier articles` subcommands.
package enum ArticlesCommand: Sendable, Equatable {
  /// `list [--offline]`.
  case list(offline: Bool)
  /// `add --title T [--body B]`.
  case add(title: String, body: String)
  /// `edit ID [--title T] [--body B]`.
  case edit(id: String, title: String?, body: String?)
  /// `delete ID`.
  case delete(id: String)
}
