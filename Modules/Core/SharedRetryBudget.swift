import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A retry budget shared by every request of one client (see `RetryBudget`).
package final class SharedRetryBudget: Sendable {
  private let budget: Mutex<RetryBudget>

  /// Creates a full budget.
  /// - Parameter budget: the initial budget.
  package init(_ budget: RetryBudget = RetryBudget()) { self.budget = Mutex(budget) }

  /// Whether a retry may be made now.
  package var allowsRetry: Bool { budget.withLock { $0.allowsRetry } }

  /// Tokens left.
  package var tokens: Double { budget.withLock { $0.tokens } }

  func recordFailure() { budget.withLock { $0.recordFailure() } }
  func recordSuccess() { budget.withLock { $0.recordSuccess() } }
}
