import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One decision of the retry step, reported as it happens to the observer in the call's
/// `TransportOptions` (for `--verbose`, progress UIs, and the front, which learns from them how
/// many attempts a call made: decision 2201).
package enum RetryEvent: Sendable, Equatable {
  /// Attempt number `attempt` is starting.
  case attemptStarted(attempt: Int)
  /// Attempt `attempt` failed with `error`; the next starts after `delay`.
  case retrying(attempt: Int, maxAttempts: Int, delay: Duration, error: CourierError)
  /// The executor stopped after `attempts` attempts for `reason`.
  case gaveUp(attempts: Int, reason: GiveUpReason, error: CourierError)
  /// Attempt `attempts` succeeded.
  case succeeded(attempts: Int)
}

extension RetryEvent {
  /// One line for a person: "server busy, retrying in 1.2 s (attempt 2 of 4)".
  package var humanDescription: String {
    switch self {
    case .attemptStarted(let attempt):
      return "attempt \(attempt)"
    case .retrying(let attempt, let maxAttempts, let delay, let error):
      let wait = delay.seconds.fixed(digits: 1)
      return "\(RetryEvent.shortReason(error)), retrying in \(wait) s, "
        + "attempt \(attempt + 1) of \(maxAttempts)"
    case .gaveUp(let attempts, let reason, let error):
      return "giving up after \(attempts) attempt\(attempts == 1 ? "" : "s") "
        + "(\(reason.rawValue)): \(RetryEvent.shortReason(error))"
    case .succeeded(let attempts):
      return "succeeded after \(attempts) attempt\(attempts == 1 ? "" : "s")"
    }
  }

  /// A few words on a failure, naming the status where there is one (for logs, not messages).
  static func shortReason(_ error: CourierError) -> String {
    switch error.kind {
    case .overloaded: return "server busy" + (error.status.map { " (\($0))" } ?? "")
    case .server: return "server error" + (error.status.map { " (\($0))" } ?? "")
    case .timedOut: return "timed out"
    case .offline: return "offline"
    case .cannotReachHost: return "server unreachable"
    case .dns: return "name not found"
    case .connectionLost: return "connection lost"
    default: return error.kind.rawValue
    }
  }
}
