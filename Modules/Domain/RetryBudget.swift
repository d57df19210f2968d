/// A retry budget shared by every request of one client, as gRPC's retry throttling does: each
/// failed attempt takes a token, each success gives back a fraction; retries stop while the
/// bucket is at or below half. A fleet of failing requests thus cannot become a storm.
public struct RetryBudget: Sendable, Equatable {
  /// The bucket's size.
  public let capacity: Double
  /// What a success gives back.
  public let refillPerSuccess: Double
  /// Tokens now.
  public private(set) var tokens: Double

  /// Creates a full bucket.
  /// - Parameters:
  ///   - capacity: the size (default 10).
  ///   - refillPerSuccess: the token fraction a success returns (default 0.1).
  public init(capacity: Double = 10, refillPerSuccess: Double = 0.1) {
    self.capacity = max(1, capacity)
    self.refillPerSuccess = refillPerSuccess
    self.tokens = max(1, capacity)
  }

  /// Whether a retry may be made now.
  public var allowsRetry: Bool { tokens > capacity / 2 }

  /// Records a failed attempt: one token less.
  public mutating func recordFailure() { tokens = max(0, tokens - 1) }

  /// Records a success: a fraction of a token back.
  public mutating func recordSuccess() { tokens = min(capacity, tokens + refillPerSuccess) }
}
