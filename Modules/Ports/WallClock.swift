#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Tells the wall-clock time, for timestamps (not for waiting: waits use `Clock<Duration>`).
package protocol WallClock: Sendable {
  /// The current time.
  /// - Returns: now.
  func now() -> Date
}
