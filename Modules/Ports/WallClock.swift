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

/// A source of uniform random numbers in `0..<1`, injected so jitter is testable.
public protocol RandomSource: Sendable {
  /// A uniform draw.
  /// - Returns: a number in `0..<1`.
  func next() -> Double
}

/// The system's random generator.
public struct SystemRandomSource: RandomSource {
  /// Creates the source.
  public init() {}

  /// A uniform draw.
  /// - Returns: a number in `0..<1`.
  public func next() -> Double { Double.random(in: 0..<1) }
}
