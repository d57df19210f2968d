#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What enqueueing did to the outbox.
package enum EnqueueResult: Sendable, Equatable {
  /// A new entry at the end of the queue.
  case appended(OutboxEntry)
  /// Merged into the record's last unsent entry, which keeps its place in the queue.
  case coalesced(OutboxEntry)
  /// The operation cancelled the record's last unsent entry (a create then a delete): both
  /// are gone and nothing will be sent. Carries the entry removed.
  case cancelled(removed: OutboxEntry)

  /// The entry that will be sent, or nil when nothing will.
  package var entry: OutboxEntry? {
    switch self {
    case .appended(let entry), .coalesced(let entry): return entry
    case .cancelled: return nil
    }
  }
}
