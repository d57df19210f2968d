#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a local record stands relative to the server.
public enum LocalState: String, Sendable, Codable, CaseIterable {
  /// Same as the server's copy; no local change waits.
  case synced
  /// Created here; the server has not confirmed it yet.
  case created
  /// Changed here; the change has not been confirmed yet.
  case modified
  /// Deleted here; the deletion has not been confirmed yet (a tombstone).
  case deleted

  /// The state a record with local changes is in, from what it holds.
  /// - Parameters:
  ///   - payload: the local payload, nil when deleted locally.
  ///   - server: the server's copy, if known.
  /// - Returns: `deleted`, `created` or `modified`.
  package static func pending(payload: JSONValue?, server: ServerRecord?) -> LocalState {
    if payload == nil { return .deleted }
    return server == nil ? .created : .modified
  }
}
