import Logging

extension Logger {
  /// What a Courier component logs to when its user gives it no logger: a logger whose handler
  /// drops everything (swift-log's `SwiftLogNoOpLogHandler`), so a program that asks for nothing
  /// sees nothing and pays nothing (decision 2203). Never `LoggingSystem`'s: the library does
  /// not make loggers of the application's.
  @usableFromInline
  package static let courierDiscarding = Logger(
    label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })

  /// Whether an entry at `level` reaches the handler: the check before work done only for a
  /// log (a request id drawn, a line formatted).
  /// - Parameter level: the entry's level.
  /// - Returns: true when the logger's level lets it through.
  package func logs(_ level: Logger.Level) -> Bool { logLevel <= level }
}

/// The metadata keys Courier's log entries carry (decision 2203; the DocC article "Metrics and
/// logging" lists them). Values are never secrets: no URL, header or body goes in one.
package enum CourierLogKey {
  /// One call a caller made: a request through the pipeline with all its attempts, or a
  /// resumable upload with all its requests. A random 16-digit hex number.
  package static let requestID = "courier.request.id"
  /// The attempt of that call an entry is about, from 1.
  package static let attempt = "courier.attempt"
  /// The outbox operation being sent (its id, a UUID): the same in every entry of its sends.
  package static let operationID = "courier.operation.id"
  /// The collection of the record or outbox entry (`articles`, `uploads`, a declared one).
  package static let collection = "courier.collection"
  /// The HTTP status of an answer.
  package static let status = "courier.http.status"
  /// The kind of a failure (`CourierError.Kind`'s raw value: `offline`, `timedOut`, …).
  package static let errorKind = "courier.error.kind"
  /// The wait before the next attempt, in seconds.
  package static let retryDelay = "courier.retry.delay"
  /// Why the retries stopped (`GiveUpReason`'s raw value).
  package static let giveUpReason = "courier.retry.give_up_reason"
  /// The status of a network path (`satisfied`, `unsatisfied`, …).
  package static let pathStatus = "courier.path.status"
  /// The status a path changed from.
  package static let pathPreviousStatus = "courier.path.previous_status"
  /// What a replay pass did: entries sent, refused, parked (decision 2401), still pending.
  package static let replaySent = "courier.replay.sent"
  /// See ``replaySent``.
  package static let replayRejected = "courier.replay.rejected"
  /// See ``replaySent``; only when the pass parked one.
  package static let replayParked = "courier.replay.parked"
  /// See ``replaySent``.
  package static let replayPending = "courier.replay.pending"

  /// A new request id: 16 hex digits, random, for a call that has none yet.
  /// - Returns: the id.
  package static func newRequestID() -> Logger.MetadataValue {
    let value = UInt64.random(in: 1...UInt64.max)
    let digits = String(value, radix: 16)
    return .string(String(repeating: "0", count: 16 - digits.count) + digits)
  }
}
