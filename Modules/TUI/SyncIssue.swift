import CourierDomain

/// An operation the server refused, or a conflict, with the sentence to show.
package struct SyncIssue: Sendable, Hashable {
  /// The article concerned, when there is one.
  package var articleID: String?
  /// What the operation was about ("Create “Lunch”"), for a person.
  package var title: String
  /// The message for a person (from `UserMessages` or the server).
  package var message: String

  /// Creates an issue.
  /// - Parameters:
  ///   - articleID: the article concerned.
  ///   - title: what it was about.
  ///   - message: the message to show.
  package init(articleID: String? = nil, title: String, message: String) {
    self.articleID = articleID
    self.title = title
    self.message = message
  }
}
