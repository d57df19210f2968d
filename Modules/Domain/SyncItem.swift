#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record as the sync engine shows it: the typed value with its local state.
public struct SyncItem<Record: CollectionRecord>: Sendable {
  /// The typed record (local payload, server version).
  public var value: Record
  /// Synced, created, or modified locally.
  public var state: LocalState

  /// Creates an item.
  /// - Parameters:
  ///   - value: the record.
  ///   - state: its state.
  package init(value: Record, state: LocalState) {
    self.value = value
    self.state = state
  }
}
