import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// A decorator that conforms to `SegmentedBodyTransport` but can stream segments only when the
/// transport it wraps can. Callers ask `SegmentStreaming.streamer(for:)` rather than casting,
/// so a decorated adapter without the capability is not mistaken for one that has it.
public protocol SegmentForwarding: SegmentedBodyTransport {
  /// Whether a segmented upload reaches a transport that streams it.
  var forwardsSegments: Bool { get }
}

/// Finds out whether a (possibly decorated) transport streams segmented bodies.
public enum SegmentStreaming {
  /// The transport as a segment streamer, when it and everything it wraps can stream.
  /// - Parameter transport: the transport, decorated or not.
  /// - Returns: the streamer, or nil when the body must go through a file.
  public static func streamer(for transport: any Transport) -> (any SegmentedBodyTransport)? {
    if let forwarding = transport as? any SegmentForwarding {
      return forwarding.forwardsSegments ? forwarding : nil
    }
    return transport as? any SegmentedBodyTransport
  }

  /// The error a decorator throws when asked to stream segments its base cannot stream.
  /// - Parameter request: the request.
  /// - Returns: the error.
  static func unsupported(_ request: HTTPRequest) -> CourierError {
    CourierError(
      .invalidInput, code: "segments_unsupported",
      serverMessage: "This transport can't stream a body in segments; send it from a file.",
      context: request.summary)
  }
}

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
