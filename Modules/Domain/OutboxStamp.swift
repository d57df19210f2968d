#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where an outbox entry stands, read without decoding it: its place in the queue, its attempt
/// count and whether it is pending. What a replay window checks before it counts attempts or
/// completes entries it already holds (decision 1204), so each entry is decoded once a pass.
public struct OutboxStamp: Sendable, Equatable {
  /// The entry's place in the queue.
  package var sequence: Int64
  /// Its attempt count.
  package var attempts: Int
  /// Whether it is pending.
  package var isPending: Bool

  /// Creates a stamp.
  /// - Parameters:
  ///   - sequence: the place in the queue.
  ///   - attempts: the attempt count.
  ///   - isPending: whether it is pending.
  package init(sequence: Int64, attempts: Int, isPending: Bool) {
    self.sequence = sequence
    self.attempts = attempts
    self.isPending = isPending
  }

  /// The stamp of an entry.
  /// - Parameter entry: the entry.
  package init(_ entry: OutboxEntry) {
    self.init(sequence: entry.sequence, attempts: entry.attempts, isPending: entry.state.isPending)
  }
}
