import CourierDomain
import Foundation
import Synchronization

/// Retry observation for callers that did not build the pipeline: an observer registered for
/// one `Idempotency-Key`, told of each decision `RetryingTransport` makes for requests carrying
/// that key. (A task-local observer was tried first: reading it crashed release builds of
/// Swift 6.3.1 inside `swift_task_localValuePush`; see Docs/decisions/0310.)
public enum RetryObservation {
  private static let observers = Mutex<[String: @Sendable (RetryEvent) -> Void]>([:])

  /// Runs `operation` with `observer` registered for requests carrying `key`.
  /// - Parameters:
  ///   - key: the `Idempotency-Key` of the requests to observe (unique to the caller).
  ///   - observer: receives each retry decision.
  ///   - operation: the work that sends the requests.
  /// - Returns: what `operation` returned.
  /// - Throws: what `operation` threw.
  public static func observing<T: Sendable>(
    key: String, _ observer: @escaping @Sendable (RetryEvent) -> Void,
    during operation: () async throws -> T
  ) async throws -> T {
    observers.withLock { $0[key] = observer }
    defer { _ = observers.withLock { $0.removeValue(forKey: key) } }
    return try await operation()
  }

  /// Tells the observer registered for the request's key, if any.
  static func notify(_ request: HTTPRequest, _ event: RetryEvent) {
    guard let key = request.headers["Idempotency-Key"] else { return }
    let observer = observers.withLock { $0[key] }
    observer?(event)
  }
}
