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
  /// The server's record changed since the base version; carries the server's record, or
  /// `.null` when the server showed none: the record was deleted there (decision 2401).
  case conflicted(serverRecord: JSONValue)
  /// Set aside: its replies never proved that the server applied it, while the server answered
  /// (decision 2401). It keeps its `Idempotency-Key` (the server may hold it) and holds its
  /// record's later entries; `outbox retry` sends it again. `reason` says why, `code` is the
  /// reply's shortfall (`reply_stale_version`...).
  case parked(reason: String, code: String?)

  /// Whether the entry waits to be sent.
  package var isPending: Bool { self == .pending }
}

// The encoded form is the one Swift synthesizes for the first three cases (`{"pending":{}}`,
// `{"rejected":{"message":…,"code":…}}`, `{"conflicted":{"serverRecord":…}}`), which every
// Courier's file journal holds. A parked entry is written as a pending one carrying its reason,
// `{"pending":{"parked":{"reason":…,"code":…}}}`: a Courier from before parking reads it as
// pending (the synthesized decoder ignores what a case without values holds) and sends it again
// under its key, rather than refusing the whole journal (decision 2401).
extension OutboxEntryState {
  private enum CodingKeys: String, CodingKey {
    case pending, rejected, conflicted, parked
  }

  private enum PendingKeys: String, CodingKey {
    case parked
  }

  private enum RejectedKeys: String, CodingKey {
    case message, code
  }

  private enum ConflictedKeys: String, CodingKey {
    case serverRecord
  }

  private enum ParkedKeys: String, CodingKey {
    case reason, code
  }

  /// Decodes a state, a parked one from within a pending one.
  /// - Parameter decoder: the decoder.
  /// - Throws: `DecodingError` when it is not one state.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    guard container.allKeys.count == 1, let key = container.allKeys.first else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: container.codingPath, debugDescription: "Not one outbox entry state."))
    }
    switch key {
    case .pending:
      let pending = try container.nestedContainer(keyedBy: PendingKeys.self, forKey: .pending)
      guard pending.contains(.parked) else {
        self = .pending
        return
      }
      self = try Self.parked(pending.nestedContainer(keyedBy: ParkedKeys.self, forKey: .parked))
    case .rejected:
      let rejected = try container.nestedContainer(keyedBy: RejectedKeys.self, forKey: .rejected)
      self = .rejected(
        message: try rejected.decode(String.self, forKey: .message),
        code: try rejected.decodeIfPresent(String.self, forKey: .code))
    case .conflicted:
      let conflicted = try container.nestedContainer(
        keyedBy: ConflictedKeys.self, forKey: .conflicted)
      self = .conflicted(serverRecord: try conflicted.decode(JSONValue.self, forKey: .serverRecord))
    case .parked:
      self = try Self.parked(container.nestedContainer(keyedBy: ParkedKeys.self, forKey: .parked))
    }
  }

  private static func parked(_ container: KeyedDecodingContainer<ParkedKeys>) throws -> Self {
    .parked(
      reason: try container.decode(String.self, forKey: .reason),
      code: try container.decodeIfPresent(String.self, forKey: .code))
  }

  /// Encodes a state; a parked one as a pending one carrying its reason.
  /// - Parameter encoder: the encoder.
  /// - Throws: the encoder's error.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .pending:
      _ = container.nestedContainer(keyedBy: PendingKeys.self, forKey: .pending)
    case .rejected(let message, let code):
      var rejected = container.nestedContainer(keyedBy: RejectedKeys.self, forKey: .rejected)
      try rejected.encode(message, forKey: .message)
      try rejected.encodeIfPresent(code, forKey: .code)
    case .conflicted(let serverRecord):
      var conflicted = container.nestedContainer(keyedBy: ConflictedKeys.self, forKey: .conflicted)
      try conflicted.encode(serverRecord, forKey: .serverRecord)
    case .parked(let reason, let code):
      var pending = container.nestedContainer(keyedBy: PendingKeys.self, forKey: .pending)
      var parked = pending.nestedContainer(keyedBy: ParkedKeys.self, forKey: .parked)
      try parked.encode(reason, forKey: .reason)
      try parked.encodeIfPresent(code, forKey: .code)
    }
  }
}
