#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One entry the server proved it applied, to complete in a batch (`LocalStore.completeAll`):
/// the entry as the replay holds it, and the server's record after it (nil for a delete).
public struct OutboxCompletion: Sendable, Equatable {
  /// The entry, as the replay read it (the store checks it is still there, at its place).
  public var entry: OutboxEntry
  /// The server's record after it; nil for a delete.
  public var serverRecord: ServerRecord?

  /// Creates a completion.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - serverRecord: the server's record after it.
  public init(entry: OutboxEntry, serverRecord: ServerRecord?) {
    self.entry = entry
    self.serverRecord = serverRecord
  }

  /// The entry's operation id.
  public var id: UUID { entry.id }
}
