import CourierDomain

/// Which screen is showing.
package enum Screen: Sendable, Hashable {
  /// The articles list.
  case list
  /// One article, its body scrolled by `scroll` lines.
  case detail(id: String, scroll: Int)
  /// The keys.
  case help
  /// Adding or editing an article.
  case editForm(EditForm)
  /// Asking for a line of text.
  case prompt(Prompt)
  /// Asking whether to delete an article.
  case confirmDelete(id: String, title: String)
}
