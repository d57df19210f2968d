import CourierPorts
import Synchronization

/// How many attempts one call made, learnt from the retry step's decisions (`RetryEvent`) as
/// they reach the call's `onRetry`: the response no longer carries it (decision 2201). A front
/// (`APIClient`, the multipart upload) chains it before its caller's own observer; a call that
/// went through no retry step made one attempt.
package final class AttemptCount: Sendable {
  private let count = Mutex(1)

  package init() {}

  /// The attempts so far: the number of the last attempt started (1 when none was reported).
  package var value: Int { count.withLock { $0 } }

  /// An observer that counts, then passes each event on.
  /// - Parameter next: the caller's own observer; nil for none.
  /// - Returns: the observer to put in the call's options.
  package func observer(
    before next: (@Sendable (RetryEvent) -> Void)?
  ) -> @Sendable (RetryEvent) -> Void {
    { event in
      switch event {
      case .attemptStarted(let attempt): self.count.withLock { $0 = max($0, attempt) }
      case .succeeded(let attempts), .gaveUp(let attempts, _, _):
        self.count.withLock { $0 = max($0, attempts) }
      case .retrying: break
      }
      next?(event)
    }
  }
}
