import Foundation

/// Tells the wall-clock time, for timestamps (not for waiting: waits use `Clock<Duration>`).
public protocol WallClock: Sendable {
  /// The current time.
  /// - Returns: now.
  func now() -> Date
}

/// The system's wall clock.
public struct SystemWallClock: WallClock {
  /// Creates the clock.
  public init() {}

  /// The current time.
  /// - Returns: `Date()`.
  public func now() -> Date { Date() }
}
