import Foundation

/// A small seeded generator (Steele, Lea and Flood's SplitMix64): the same seed gives the same
/// bytes on every run, so a failing test is replayed by its seed rather than by luck.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64
  /// The seed the sequence started from, for a failing test's message.
  public let seed: UInt64

  /// A generator whose sequence is fixed by `seed`.
  /// - Parameter seed: any value; different seeds give unrelated sequences.
  public init(seed: UInt64) {
    state = seed
    self.seed = seed
  }

  /// A test's generator: from `fixed`, the same on every run, unless `COURIER_TEST_SEED` gives
  /// another seed (a soak run, Docs/testing.md).
  /// - Parameter fixed: the test's own seed.
  public init(testSeed fixed: UInt64) { self.init(seed: Self.testSeed(fixed)) }

  /// "seed 0x…", for the message of a test that fails: the run is replayed with
  /// `COURIER_TEST_SEED=0x…`.
  public var seedDescription: String { "seed 0x" + String(seed, radix: 16) }

  /// The sequence's next value: the state moves on by the golden ratio's bits, then is mixed.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

extension SplitMix64 {
  /// The variable that replaces every test's fixed seed, for a soak run (Docs/testing.md).
  public static let seedVariable = "COURIER_TEST_SEED"

  /// The seed a test draws its random input from: `fixed`, the same on every run, unless
  /// `COURIER_TEST_SEED` (decimal or 0x-hexadecimal) gives another. A test prints the seed it used
  /// when it fails, and keeps each input that ever failed as a fixed row.
  /// - Parameter fixed: the test's own seed.
  /// - Returns: the seed to draw from.
  public static func testSeed(_ fixed: UInt64) -> UInt64 {
    guard let text = ProcessInfo.processInfo.environment[seedVariable], !text.isEmpty else {
      return fixed
    }
    let parsed =
      text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    guard let parsed else { fatalError("\(seedVariable)=\(text) is not a 64-bit seed") }
    return parsed
  }
}
