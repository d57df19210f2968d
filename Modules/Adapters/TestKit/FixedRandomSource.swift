import CourierPorts
import Synchronization

/// A random source that returns a fixed sequence of draws (the last one repeats), so jittered
/// delays are predictable in tests.
public final class FixedRandomSource: RandomSource {
  private let draws: Mutex<[Double]>

  /// Creates a source.
  /// - Parameter draws: the draws in order, each in `0..<1`; the last repeats.
  public init(_ draws: Double...) { self.draws = Mutex(draws.isEmpty ? [0.5] : draws) }

  /// The next draw.
  /// - Returns: a number in `0..<1`.
  public func next() -> Double {
    draws.withLock { draws in
      draws.count > 1 ? draws.removeFirst() : draws[0]
    }
  }
}
