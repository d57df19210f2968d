import CourierDomain

/// What the interface asks the core to do; the event loop hands each one to `TUIActions`.
package enum TUIAction: Sendable, Hashable {
  /// Fetch the articles from the network again.
  case refresh
  /// Send the outbox now.
  case syncNow
  /// Create an article.
  case addArticle(title: String, body: String)
  /// Change an article.
  case editArticle(id: String, title: String, body: String)
  /// Delete an article.
  case deleteArticle(id: String)
  /// Upload the photo at a path, as typed.
  case upload(path: String)
  /// Leave the interface.
  case quit
}
