/// What a path change asks the rest of the application to do. The hint informs; it never
/// decides whether a request may go.
package enum PathHintEffect: Sendable, Hashable {
  /// Show this path to subscribers (a banner, `courier watch`).
  case publish(NetworkPath)
  /// The path came back after being unavailable: resume waiting work, once per recovery.
  case resumePendingWork
  /// `isExpensive` or `isConstrained` changed: re-choose what transfers are allowed.
  case transferPolicyChanged(expensive: Bool, constrained: Bool)
}
