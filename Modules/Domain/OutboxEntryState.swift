#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where an outbox entry stands.
package enum OutboxEntryState: Sendable, Equatable, Codable {
  /// Waiting to be sent (or re-sent after a transient failure).
  case pending
  /// The server refused it for a business reason; kept so the user sees why.
  case rejected(message: String, code: String?)
  /// The server's record changed since the base version; carries the server's record.
  case conflicted(serverRecord: JSONValue)

  /// Whether the entry waits to be sent.
  package var isPending: Bool { self == .pending }
}
