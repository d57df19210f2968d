#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The system's random generator.
public struct SystemRandomSource: RandomSource {
  /// Creates the source.
  public init() {}

  /// A uniform draw.
  /// - Returns: a number in `0..<1`.
  public func next() -> Double { Double.random(in: 0..<1) }
}
