import Foundation

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
