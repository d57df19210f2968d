#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The outcome of a conflict decision.
package enum ConflictResolution: Sendable, Equatable {
  /// The local write wins: send it again based on the server's version.
  case resend(baseVersion: Int)
  /// The server's record wins: adopt it and drop the local write.
  case takeServer
  /// Keep both sides: the write stays in the outbox, conflicted, until the user decides.
  case keepBoth
}
