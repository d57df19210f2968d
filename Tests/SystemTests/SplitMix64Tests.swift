import CourierTestSupport
import Testing

/// The seeded generator every test draws from: a seed replays a failure only if the sequence is
/// the published SplitMix64 one and the seed an environment variable names is the one used.
@Suite("SplitMix64")
struct SplitMix64Tests {
  @Test("seed 0 gives the reference sequence (Steele, Lea and Flood's SplitMix64)")
  func referenceSequence() {
    var generator = SplitMix64(seed: 0)
    #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
    #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
    #expect(generator.next() == 0x06C4_5D18_8009_454F)
  }

  @Test("the same seed gives the same draws; its description names it")
  func replayable() {
    var first = SplitMix64(seed: 0xABC)
    var second = SplitMix64(seed: 0xABC)
    #expect((0..<100).map { _ in first.next() } == (0..<100).map { _ in second.next() })
    #expect(first.seedDescription == "seed 0xabc")
  }
}
