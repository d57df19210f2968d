#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The system's wall clock.
package struct SystemWallClock: WallClock {
  /// Creates the clock.
  package init() {}

  /// The current time.
  /// - Returns: `Date()`.
  package func now() -> Date { Date() }
}
