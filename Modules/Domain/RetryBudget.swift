/// A retry budget shared by every request of one client, as gRPC's retry throttling does: each
/// failed attempt takes a token, each success gives back a fraction; retries stop while the
/// bucket is at or below half. A fleet of failing requests thus cannot become a storm.
package struct RetryBudget: Sendable, Equatable {
  /// The bucket's size.
  package let capacity: Double
  /// What a success gives back.
  package let refillPerSuccess: Double
  /// Tokens now.
  package private(set) var tokens: Double

  /// Creates a full bucket.
  /// - Parameters:
  ///   - capacity: the size (default 10).
  ///   - refillPerSuccess: the token fraction a success returns (default 0.1).
  package init(capacity: Double = 10, refillPerSuccess: Double = 0.1) {
    self.capacity = max(1, capacity)
    self.refillPerSuccess = refillPerSuccess
    self.tokens = max(1, capacity)
  }

  /// Whether a retry may be made now.
  package var allowsRetry: Bool { tokens > capacity / 2 }

  /// Records a failed attempt: one token less.
  package mutating func recordFailure() { tokens = max(0, tokens - 1) }

  /// Records a success: a fraction of a token back.
  package mutating func recordSuccess() { tokens = min(capacity, tokens + refillPerSuccess) }
}
