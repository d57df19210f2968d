#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How the sync engine settles a `409 version_conflict`: the server's record changed since the
/// version a queued local write was based on. See Docs/decisions/0411 for what each one can lose.
public enum ConflictPolicy: String, Sendable, Codable, CaseIterable {
  /// The newer write wins: the local edit time against the server's `updated_at`.
  case lastWriteWins
  /// The server's record always wins; the local write is dropped.
  case serverWins
  /// Keep both, mark the write conflicted and let the user decide.
  case manual
  /// Merge field by field against the base copy the local write started from: fields only one
  /// side changed keep that side's value, fields both changed go to a resolver (last write wins
  /// by default). Decided by `ReplayDecision` with `ThreeWayMerge` (decision 1201).
  case merge

  /// Reads a policy from its configuration spelling (case-insensitive, `-`/`_` ignored).
  /// - Parameter text: `lastWriteWins`, `last_write_wins`, `serverWins`, `manual`, `merge`...
  /// - Returns: the policy, or nil when the text names none.
  public static func parse(_ text: String) -> ConflictPolicy? {
    let folded = text.lowercased().filter { $0 != "-" && $0 != "_" }
    return allCases.first { $0.rawValue.lowercased() == folded }
  }

  /// Decides what to do with a conflicted write.
  /// - Parameters:
  ///   - localEditAt: when the user made the local write.
  ///   - server: the server's current record (the `current` of the 409), nil when the server
  ///     did not send one or it could not be read.
  /// - Returns: the resolution.
  public func resolve(localEditAt: Date, server: ServerRecord?) -> ConflictResolution {
    guard let server else { return .keepBoth }
    switch self {
    case .serverWins:
      return .takeServer
    case .manual:
      return .keepBoth
    case .merge:
      // A merge needs the base copy and the local fields, which `ReplayDecision` has; on the
      // record level alone nothing can be merged, so nothing is dropped.
      return .keepBoth
    case .lastWriteWins:
      // A server record without a time cannot be compared: it counts as older, the user's
      // explicit edit is what they last saw.
      guard let serverTime = server.updatedAt else { return .resend(baseVersion: server.version) }
      // Ties go to the server: it already holds that state and every other client sees it.
      return localEditAt > serverTime ? .resend(baseVersion: server.version) : .takeServer
    }
  }
}
