#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One entry the server proved it applied, to complete in a batch (`LocalStore.completeAll`):
/// the entry as the replay holds it, and the server's record after it (nil for a delete).
package struct OutboxCompletion: Sendable, Equatable {
  /// The entry, as the replay read it (the store checks it is still there, at its place).
  package var entry: OutboxEntry
  /// The server's record after it; nil for a delete.
  package var serverRecord: ServerRecord?

  /// Creates a completion.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - serverRecord: the server's record after it.
  package init(entry: OutboxEntry, serverRecord: ServerRecord?) {
    self.entry = entry
    self.serverRecord = serverRecord
  }

  /// The entry's operation id.
  package var id: UUID { entry.id }
}
