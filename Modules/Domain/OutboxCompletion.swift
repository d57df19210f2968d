import Foundation

/// One entry the server proved it applied, to complete in a batch (`LocalStore.completeAll`):
/// its operation id and the server's record after it (nil for a delete).
public struct OutboxCompletion: Sendable, Equatable {
  /// The entry's operation id.
  public var id: UUID
  /// The server's record after it; nil for a delete.
  public var serverRecord: ServerRecord?

  /// Creates a completion.
  /// - Parameters:
  ///   - id: the entry's operation id.
  ///   - serverRecord: the server's record after it.
  public init(id: UUID, serverRecord: ServerRecord?) {
    self.id = id
    self.serverRecord = serverRecord
  }
}
