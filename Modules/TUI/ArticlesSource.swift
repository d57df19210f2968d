import CourierDomain

/// Where the articles on screen come from.
package enum ArticlesSource: Sendable, Hashable {
  /// Nothing loaded yet.
  case none
  /// The local cache, saved `age` ago (the network has not answered yet, or failed).
  case cache(age: Duration)
  /// A fresh answer from the server.
  case network
}
