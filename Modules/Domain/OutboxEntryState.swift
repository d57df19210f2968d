#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where an outbox entry stands.
public enum OutboxEntryState: Sendable, Equatable, Codable {
  /// Waiting to be sent (or re-sent after a transient failure).
  case pending
  /// The server refused it for a business reason; kept so the user sees why.
  case rejected(message: String, code: String?)
  /// The server's record changed since the base version; carries the server's record, or
  /// `.null` when the server showed none: the record was deleted there (decision 2401).
  case conflicted(serverRecord: JSONValue)
  /// Set aside: its replies never proved that the server applied it, while the server answered
  /// (decision 2401). It keeps its `Idempotency-Key` (the server may hold it) and holds its
  /// record's later entries; `outbox retry` sends it again. `reason` says why, `code` is the
  /// reply's shortfall (`reply_stale_version`...).
  case parked(reason: String, code: String?)

  /// Whether the entry waits to be sent.
  public var isPending: Bool { self == .pending }
}
