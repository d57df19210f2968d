#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A source of uniform random numbers in `0..<1`, injected so jitter is testable.
public protocol RandomSource: Sendable {
  /// A uniform draw.
  /// - Returns: a number in `0..<1`.
  func next() -> Double
}
