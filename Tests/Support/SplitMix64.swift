/// A small seeded generator (Steele, Lea and Flood's SplitMix64): the same seed gives the same
/// bytes on every run, so a failing test is replayed by its seed rather than by luck.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator whose sequence is fixed by `seed`.
  /// - Parameter seed: any value; different seeds give unrelated sequences.
  public init(seed: UInt64) { state = seed }

  /// The sequence's next value: the state moves on by the golden ratio's bits, then is mixed.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
