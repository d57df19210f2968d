#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The system's random generator.
@usableFromInline package struct SystemRandomSource: RandomSource {
  /// Creates the source.
  @usableFromInline package init() {}

  /// A uniform draw.
  /// - Returns: a number in `0..<1`.
  @usableFromInline package func next() -> Double { Double.random(in: 0..<1) }
}
