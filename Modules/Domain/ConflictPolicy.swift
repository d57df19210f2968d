#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How the sync engine settles a `409 version_conflict`: the server's record changed since the
/// version a queued local write was based on. See Docs/decisions/0411 for what each one can lose.
///
/// A struct over a private code, so that a policy added later breaks no one's `switch`.
public struct ConflictPolicy: Sendable, Hashable {
  /// The policies, for Courier's own exhaustive switches.
  package enum Code: String, Sendable, CaseIterable {
    /// The newer write wins.
    case lastWriteWins
    /// The server's record wins.
    case serverWins
    /// Both are kept for the user.
    case manual
    /// Field by field against the base copy.
    case merge
  }

  /// Which policy this is.
  package let code: Code

  /// A policy.
  /// - Parameter code: which.
  package init(_ code: Code) { self.code = code }

  /// The newer write wins: the local edit time against the server's `updated_at`.
  public static let lastWriteWins = ConflictPolicy(.lastWriteWins)
  /// The server's record always wins; the local write is dropped.
  public static let serverWins = ConflictPolicy(.serverWins)
  /// Keep both, mark the write conflicted and let the user decide.
  public static let manual = ConflictPolicy(.manual)
  /// Merge field by field against the base copy the local write started from: fields only one
  /// side changed keep that side's value, fields both changed go to a resolver (last write wins
  /// by default). Decided by `ReplayDecision` with `ThreeWayMerge` (decision 1201).
  public static let merge = ConflictPolicy(.merge)

  /// Every policy.
  package static let allCases = Code.allCases.map(ConflictPolicy.init)

  /// The policy's configuration spelling (`lastWriteWins`...).
  package var rawValue: String { code.rawValue }

  /// Reads a policy from its configuration spelling (case-insensitive, `-`/`_` ignored).
  /// - Parameter text: `lastWriteWins`, `last_write_wins`, `serverWins`, `manual`, `merge`...
  /// - Returns: the policy, or nil when the text names none.
  package static func parse(_ text: String) -> ConflictPolicy? {
    let folded = text.lowercased().filter { $0 != "-" && $0 != "_" }
    return allCases.first { $0.rawValue.lowercased() == folded }
  }

  /// Decides what to do with a conflicted write.
  /// - Parameters:
  ///   - localEditAt: when the user made the local write.
  ///   - server: the server's current record (the `current` of the 409), nil when the server
  ///     did not send one or it could not be read.
  /// - Returns: the resolution.
  package func resolve(localEditAt: Date, server: ServerRecord?) -> ConflictResolution {
    guard let server else { return .keepBoth }
    switch code {
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
