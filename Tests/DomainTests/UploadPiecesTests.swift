import CourierDomain
import Testing

/// `UploadPieces` (decision 2704): each piece lasts about a quarter second at the rate the
/// server's answers confirm, grows at most fourfold, shrinks to a quarter when cut, keeps its
/// 1 MiB floor, never goes past the server's limit.
@Suite("UploadPieces")
struct UploadPiecesTests {
  static let kib: Int64 = 1 << 10
  static let mib: Int64 = 1 << 20

  @Test("the first piece: the given size without a rate, the rate's quarter second with one")
  func first() {
    #expect(UploadPieces().next(left: 100 * Self.mib) == Self.mib)
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
    ("4 MiB in 40 s (800 kbit/s): the 1 MiB floor", 4 * mib, 4 * mib, 40_000, 1 * mib),
    ("1 MiB in 2 s (a fixed cost per request): the floor holds", 1 * mib, 1 * mib, 2000, 1 * mib),
    ("a 256 KiB first piece is its own floor", 256 * kib, 256 * kib, 1000, 256 * kib),
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
    #expect(pieces.next(left: .max) == Self.mib)
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
}
