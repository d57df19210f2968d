import CourierDomain
import Testing

/// `UploadPieces` (decisions 2704 and 2710): each piece lasts about a quarter second at the rate
/// the server's answers confirm (as long as the fixed cost per request when that is longer, once
/// two sizes told it apart; never more than a second), grows at most fourfold, shrinks to a quarter
/// when cut, keeps its 64 KiB floor, never goes past the server's limit.
@Suite("UploadPieces")
struct UploadPiecesTests {
  static let kib: Int64 = 1 << 10
  static let mib: Int64 = 1 << 20

  @Test("the first piece: the given size without a rate, the rate's quarter second with one")
  func first() {
    #expect(UploadPieces().next(left: 100 * Self.mib) == 256 * Self.kib)
    #expect(UploadPieces(first: 4 * Self.mib).next(left: 100 * Self.mib) == 4 * Self.mib)
    // 40 Mbit/s confirmed by a process before: 1.25 MB, not the guess.
    #expect(UploadPieces(first: 4 * Self.mib, rate: 5_000_000).next(left: .max) == 1_250_000)
    // A rate that is not positive is no rate.
    #expect(UploadPieces(first: 1000, rate: 0).next(left: .max) == 1000)
    #expect(UploadPieces(first: 0).next(left: .max) == 1)
  }

  @Test("never past what is left; nothing left is 0")
  func left() {
    let pieces = UploadPieces(first: 4 * Self.mib)
    #expect(pieces.next(left: 1000) == 1000)
    #expect(pieces.next(left: 0) == 0)
    #expect(pieces.next(left: -5) == 0)
  }

  // (name, first piece, confirmed bytes, took ms, next)
  static let rows: [(String, Int64, Int64, Int64, Int64)] = [
    ("unknown time (a clock that does not move): unchanged", 4 * mib, 4 * mib, 0, 4 * mib),
    ("nothing confirmed: unchanged", 4 * mib, 0, 100, 4 * mib),
    ("4 MiB confirmed in 250 ms: just right", 4 * mib, 4 * mib, 250, 4 * mib),
    ("4 MiB in 1 s (32 Mbit/s): a quarter of it", 4 * mib, 4 * mib, 1000, 1 * mib),
    ("1 MiB in 10 ms (loopback): grows, at most fourfold", 1 * mib, 1 * mib, 10, 4 * mib),
    ("64 MiB in 10 ms: the 256 MiB ceiling", 64 * mib, 64 * mib, 10, 256 * mib),
    ("256 MiB in 1 ms: stays at the ceiling", 256 * mib, 256 * mib, 1, 256 * mib),
    ("a short piece at the same rate sizes by its rate", 8 * mib, 2 * mib, 125, 4 * mib),
    ("4 MiB in 40 s (800 kbit/s): 26 KB, the 64 KiB floor", 4 * mib, 4 * mib, 40_000, 64 * kib),
    (
      "1 MiB in 2 s: one answer is taken as the link's rate (a lower bound)", 1 * mib, 1 * mib,
      2000, 128 * kib
    ),
    ("a 32 KiB first piece is its own floor", 32 * kib, 32 * kib, 1000, 32 * kib),
    ("a tiny first piece keeps its own floor", 1000, 1000, 1000, 1000),
  ]

  @Test("the next piece lasts a quarter second at the confirmed rate", arguments: rows)
  func confirmed(_ name: String, _ first: Int64, _ bytes: Int64, _ took: Int64, _ next: Int64) {
    var pieces = UploadPieces(first: first)
    pieces.confirmed(bytes, took: .milliseconds(took))
    #expect(pieces.next(left: .max) == next, "\(name)")
  }

  @Test("the rate is what the answer confirmed over the time it took")
  func rate() {
    var pieces = UploadPieces()
    #expect(pieces.rate == nil)
    pieces.confirmed(5_000_000, took: .seconds(1))
    #expect(pieces.rate == 5_000_000)
    pieces.confirmed(1, took: .seconds(10))
    // Below a byte a second: not a rate, the last one stays.
    #expect(pieces.rate == 5_000_000)
    // A rate far past any link is bounded, not an overflow; growth stays fourfold a step.
    let before = pieces.next(left: .max)
    pieces.confirmed(.max, took: .nanoseconds(1))
    #expect(pieces.next(left: .max) == min(pieces.ceiling, before * 4))
  }

  @Test("a piece cut short: the next is a quarter, not below the floor")
  func interrupted() {
    var pieces = UploadPieces(first: 16 * Self.mib)
    pieces.interrupted()
    #expect(pieces.next(left: .max) == 4 * Self.mib)
    for _ in 0..<10 { pieces.interrupted() }
    #expect(pieces.next(left: .max) == 64 * Self.kib)
  }

  @Test("a 413: the limit it names when below the piece, else half the piece; only lower")
  func refused() {
    var pieces = UploadPieces(first: 4 * Self.mib)
    pieces.refused(piece: 4 * Self.mib, named: Self.mib)
    #expect(pieces.serverLimit == Self.mib)
    #expect(pieces.next(left: .max) == Self.mib)
    pieces.refused(piece: Self.mib, named: nil)
    #expect(pieces.serverLimit == Self.mib / 2)
    // A named limit at or above the refused piece says nothing: half.
    pieces.refused(piece: 1000, named: 5000)
    #expect(pieces.serverLimit == 500)
    pieces.refused(piece: 1, named: nil)
    #expect(pieces.serverLimit == 1)
    #expect(pieces.next(left: .max) == 1)
  }

  @Test("the server's limit bounds every piece, even below the floor; only a lower one counts")
  func limit() {
    var pieces = UploadPieces(first: 4 * Self.mib)
    pieces.limit(to: 0)
    pieces.limit(to: -1)
    #expect(pieces.serverLimit == nil)
    pieces.limit(to: 1000)
    pieces.limit(to: 5000)
    #expect(pieces.serverLimit == 1000)
    pieces.confirmed(4 * Self.mib, took: .milliseconds(1))
    #expect(pieces.next(left: .max) == 1000)
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
  }

  /// A server answering each request `fixed` after its bytes crossed a link of `rate` bytes a
  /// second: the pieces `UploadPieces` asks for, answer after answer, from a fresh upload.
  static func simulate(rate: Double, fixed: Double, steps: Int) -> (UploadPieces, [Int64]) {
    var pieces = UploadPieces()
    var sizes: [Int64] = []
    for _ in 0..<steps {
      let piece = pieces.next(left: .max)
      sizes.append(piece)
      let seconds = fixed + Double(piece) / rate
      pieces.confirmed(piece, took: .nanoseconds(Int64(seconds * 1e9)))
    }
    return (pieces, sizes)
  }

  @Test("a fixed cost per request is told apart from the link once two sizes were answered")
  func fixedCostMeasuredApart() throws {
    // The case that made 2704 keep a 1 MiB floor: about 2 s per request whatever its size (a
    // server's fsync), on a 10 MB/s link. One answer alone says 125 KB/s; two sizes say both.
    let (pieces, sizes) = Self.simulate(rate: 10_000_000, fixed: 2, steps: 8)
    let rate = try #require(pieces.rate)
    let fixed = try #require(pieces.fixedCost)
    #expect(abs(Double(rate) - 10_000_000) < 10_000, "\(rate)")
    #expect(abs(Self.seconds(fixed) - 2) < 0.01, "\(fixed)")
    // 2 s is past the second a kill may cost: pieces of one second of the link.
    #expect(abs(Double(sizes.last ?? 0) - 10_000_000) < 20_000, "\(sizes)")
    // At the floor once at most (the second piece, sized by the first answer alone), then
    // growing fourfold: never stuck there (what made 2704's 10 MiB uploads crawl).
    #expect(sizes.filter { $0 <= UploadPieces.defaultFloor }.count <= 1, "\(sizes)")
    #expect(sizes[2] == 4 * sizes[1], "\(sizes)")
  }

  @Test(
    "no piece lasts more than a second on the link: from 2 Mbit/s the first (256 KiB, before any answer), from 512 kbit/s every later one",
    arguments: [64_000.0, 262_144, 1_000_000, 5_000_000, 100_000_000],
    [0.0, 0.05, 0.3, 2])
  func killCostsAtMostASecond(rate: Double, fixed: Double) {
    let (_, sizes) = Self.simulate(rate: rate, fixed: fixed, steps: 12)
    // The floor's 64 KiB at 512 kbit/s is 1.02 s: the bound's "about".
    for size in rate >= 262_144 ? sizes : Array(sizes.dropFirst()) {
      #expect(Double(size) / rate <= 1.05, "\(size) bytes at \(rate) B/s: \(sizes)")
    }
  }

  @Test("a small fixed cost: a quarter second at the answers' rate, as before; the cost is known")
  func smallFixedCost() throws {
    // 40 Mbit/s with a 20 ms round trip: 20 ms is below the quarter second.
    let (pieces, sizes) = Self.simulate(rate: 5_000_000, fixed: 0.02, steps: 8)
    // The answer's bytes over its time (the round trip counted in): a little under 1.25 MB.
    let last = Double(sizes.last ?? 0)
    #expect(last > 1_100_000 && last < 1_250_000, "\(sizes)")
    #expect(abs(Self.seconds(try #require(pieces.fixedCost)) - 0.02) < 0.001)
  }

  @Test("the larger piece was faster: the times' spread bounds the link's share, the rest is cost")
  func largerFaster() throws {
    var pieces = UploadPieces(first: Self.mib)
    pieces.confirmed(Self.mib, took: .milliseconds(500))
    pieces.confirmed(4 * Self.mib, took: .milliseconds(400))
    // A slope of 0.1 s over 3 MiB: 30 MiB/s at least, and the mean time less the mean piece
    // at that rate is the cost (0.45 s - 2.5 MiB / 30 MiB/s = 0.367 s).
    #expect(pieces.rate == 30 * Self.mib)
    #expect(abs(Self.seconds(try #require(pieces.fixedCost)) - 0.3667) < 0.001)
    // Past a quarter second: a piece lasts the cost at that rate (11 MiB), within fourfold the
    // 512 KiB the first answer asked for.
    #expect(pieces.next(left: .max) == 2 * Self.mib)
  }

  @Test(
    "a 2.1 s cost per request on a link too fast to show (loopback): pieces grow fourfold, never stuck at the floor",
    arguments: [0.0005, -0.0005])
  func costOnAFastLink(noise: Double) {
    // Each answer 2.1 s after its request, the bytes at 1 GB/s, and the larger piece a little
    // faster or a little slower than the smaller (timer noise).
    var pieces = UploadPieces()
    var sizes: [Int64] = []
    for step in 0..<7 {
      let piece = pieces.next(left: .max)
      sizes.append(piece)
      let seconds = 2.1 + Double(piece) / 1e9 + (step.isMultiple(of: 2) ? noise : -noise)
      pieces.confirmed(piece, took: .nanoseconds(Int64(seconds * 1e9)))
    }
    // The first answer alone says 125 KB/s: the second piece is at the floor, then fourfold.
    #expect(sizes.filter { $0 <= UploadPieces.defaultFloor }.count <= 1, "\(sizes)")
    for index in 2..<sizes.count {
      #expect(sizes[index] == min(4 * sizes[index - 1], 256 << 20), "\(sizes)")
    }
  }

  @Test("a cut piece forgets the answers: the line is drawn again from the next ones")
  func cutForgets() {
    var pieces = UploadPieces(first: Self.mib)
    pieces.confirmed(Self.mib, took: .milliseconds(1100))
    pieces.confirmed(256 * Self.kib, took: .milliseconds(1025))
    #expect(pieces.fixedCost != nil)
    pieces.interrupted()
    pieces.confirmed(Self.mib, took: .seconds(1))
    #expect(pieces.fixedCost == nil)
    #expect(pieces.rate == Self.mib)
  }
}
