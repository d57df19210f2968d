#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An operation in the outbox, with its place in the queue and its progress.
public struct OutboxEntry: Sendable, Equatable, Codable {
  /// The place in the queue: entries are sent in increasing order (FIFO).
  public var sequence: Int64
  /// The change waiting to be sent: what to do to which record.
  public var operation: OutboxOperation
  /// Pending, rejected or conflicted.
  public var state: OutboxEntryState
  /// How many times sending was started. Counted before each send, so an entry with zero
  /// attempts has certainly never reached the server and may still be coalesced.
  public var attempts: Int

  /// Creates an entry.
  /// - Parameters:
  ///   - sequence: the place in the queue.
  ///   - operation: the operation.
  ///   - state: where it stands.
  ///   - attempts: sends started so far.
  public init(
    sequence: Int64, operation: OutboxOperation, state: OutboxEntryState = .pending,
    attempts: Int = 0
  ) {
    self.sequence = sequence
    self.operation = operation
    self.state = state
    self.attempts = attempts
  }

  /// The operation id (the `Idempotency-Key`).
  public var id: UUID { operation.id }
  /// The record written.
  public var key: RecordKey { operation.key }
  /// Whether the entry is pending and was never handed to the network.
  public var isUnsent: Bool { state.isPending && attempts == 0 }

  private enum CodingKeys: String, CodingKey {
    case sequence, operation, state, attempts, parked
  }

  /// A parked entry's reason, beside its state in the encoded form (decision 2401).
  private struct Parked: Codable {
    var reason: String
    var code: String?
  }

  /// Decodes an entry; a parked one is written as pending with a `parked` member, which an
  /// entry written before parking existed does not have.
  /// - Parameter decoder: the decoder.
  /// - Throws: `DecodingError` for a missing or mistyped member.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    var state = try container.decode(OutboxEntryState.self, forKey: .state)
    if let parked = try container.decodeIfPresent(Parked.self, forKey: .parked) {
      state = .parked(reason: parked.reason, code: parked.code)
    }
    self.init(
      sequence: try container.decode(Int64.self, forKey: .sequence),
      operation: try container.decode(OutboxOperation.self, forKey: .operation), state: state,
      attempts: try container.decode(Int.self, forKey: .attempts))
  }

  /// Encodes an entry. A parked entry is written as a pending one with its reason in a
  /// `parked` member: a Courier from before parking (the file store's journal) reads it as
  /// pending and sends it, rather than refusing the whole journal.
  /// - Parameter encoder: the encoder.
  /// - Throws: the encoder's error.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(sequence, forKey: .sequence)
    try container.encode(operation, forKey: .operation)
    if case .parked(let reason, let code) = state {
      try container.encode(OutboxEntryState.pending, forKey: .state)
      try container.encode(Parked(reason: reason, code: code), forKey: .parked)
    } else {
      try container.encode(state, forKey: .state)
    }
    try container.encode(attempts, forKey: .attempts)
  }
}
