import CourierDomain

/// An operation the server refused, or a conflict, with the sentence to show.
public struct SyncIssue: Sendable, Hashable {
  /// The article concerned, when there is one.
  public var articleID: String?
  /// What the operation was about ("Create “Lunch”"), for a person.
  public var title: String
  /// The message for a person (from `UserMessages` or the server).
  public var message: String

  /// Creates an issue.
  /// - Parameters:
  ///   - articleID: the article concerned.
  ///   - title: what it was about.
  ///   - message: the message to show.
  public init(articleID: String? = nil, title: String, message: String) {
    self.articleID = articleID
    self.title = title
    self.message = message
  }
}
