#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The system's wall clock.
public struct SystemWallClock: WallClock {
  /// Creates the clock.
  public init() {}

  /// The current time.
  /// - Returns: `Date()`.
  public func now() -> Date { Date() }
}
