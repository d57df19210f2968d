import CourierDomain

/// One article as the list shows it.
package struct ArticleItem: Sendable, Hashable, Identifiable {
  /// The article's id (a client-generated UUID).
  package var id: String
  /// The title.
  package var title: String
  /// The body.
  package var body: String
  /// Whether a local change to it waits in the outbox.
  package var isPending: Bool
  /// Whether the server refused a change to it because it changed elsewhere.
  package var isConflicted: Bool
  /// Where its photo stands (`photo queued`, `photo uploading 40%`, `photo sent`, `photo
  /// downloaded`); nil when it has none.
  package var photo: String?

  /// Creates a list item.
  /// - Parameters:
  ///   - id: the id.
  ///   - title: the title.
  ///   - body: the body.
  ///   - isPending: whether a change waits to be sent.
  ///   - isConflicted: whether it is in conflict.
  package init(
    id: String, title: String, body: String, isPending: Bool = false, isConflicted: Bool = false,
    photo: String? = nil
  ) {
    self.photo = photo
    self.id = id
    self.title = title
    self.body = body
    self.isPending = isPending
    self.isConflicted = isConflicted
  }
}
