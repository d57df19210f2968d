/// How many bytes the next request of a resumable upload carries, tus `PATCH` or IETF append
/// (decision 2704): sized by the rate the server's answers confirm (the offset an answer
/// confirms over the time from its request to it), so that each piece lasts about ``target``
/// on the link, whatever the link. A server that keeps nothing of a request cut short (tus
/// with a checksum, a server that buffers each request whole) loses at most one piece to a
/// kill: on average half of ``target``. Growth is at most fourfold a step (a rate measured on
/// a small piece underestimates the link, its round trip weighs more); a piece cut short makes
/// the next one a quarter; nothing is ever larger than the server's limit (IETF
/// `max-append-size`, or what a `413` showed). The floor (1 MiB) holds against a fixed cost
/// per request (a round trip, a server's fsync): measured, a 2 s fsync per `PATCH` on a loaded
/// machine shrank pieces with a 64 KiB floor to 32 KB/s; on a link below 8 Mbit/s a piece
/// lasts more than a second.
///
/// Pure: every edge is a test (`UploadPiecesTests`).
package struct UploadPieces: Sendable, Equatable {
  /// How long a piece lasts at the confirmed rate.
  package static let target: Duration = .milliseconds(250)
  /// The default size of a run's first piece when no rate is known: 1 MiB, a fifth of a
  /// second at 40 Mbit/s.
  package static let defaultFirst: Int64 = 1 << 20

  /// The smallest piece the rate may give (the server's limit may give less).
  package let floor: Int64
  /// The largest piece.
  package let ceiling: Int64
  /// The most bytes the server takes in one request, once it said so or a `413` showed it.
  package private(set) var serverLimit: Int64?
  /// The bytes per second the last answer confirmed; nil before one was measured.
  package private(set) var rate: Int64?
  /// The next piece's size before the server's limit and what is left.
  package private(set) var size: Int64

  /// Creates the sizing of one run.
  /// - Parameters:
  ///   - first: the first piece when `rate` is unknown (at least 1).
  ///   - rate: a rate confirmed earlier (by a process before this one), bytes per second.
  ///   - floor: the smallest piece from the rate: 1 MiB, or `first` when smaller.
  ///   - ceiling: the largest piece: 256 MiB, or `first` when larger.
  package init(
    first: Int64 = defaultFirst, rate: Int64? = nil, floor: Int64? = nil,
    ceiling: Int64? = nil
  ) {
    let first = max(1, first)
    let low = max(1, floor ?? min(first, 1 << 20))
    self.floor = low
    self.ceiling = max(low, ceiling ?? max(first, 256 << 20))
    size = first
    if let rate, rate > 0 {
      self.rate = rate
      size = Self.sized(by: rate, low, self.ceiling, atMost: .max)
    }
  }

  /// The size of the next piece: the rate's, never past the server's limit nor `left`.
  /// - Parameter left: the bytes the upload still needs.
  /// - Returns: at least 1 when `left` is positive, else 0.
  package func next(left: Int64) -> Int64 {
    guard left > 0 else { return 0 }
    return max(1, min(left, size, serverLimit ?? .max))
  }

  /// An answer confirmed `bytes` more than its request started from, `took` after the
  /// request started: the rate is measured and the next piece sized by it. Nothing changes
  /// when either is not positive (a clock that does not move, an answer that confirmed
  /// nothing).
  /// - Parameters:
  ///   - bytes: the bytes the answer confirmed.
  ///   - took: from the request's start to its answer.
  package mutating func confirmed(_ bytes: Int64, took: Duration) {
    let seconds = Self.seconds(took)
    guard bytes > 0, seconds > 0 else { return }
    let measured = Int64(min(Double(Int64.max / 4), (Double(bytes) / seconds).rounded(.down)))
    guard measured > 0 else { return }
    rate = measured
    let grown = size > Int64.max / 4 ? Int64.max : size * 4
    size = Self.sized(by: measured, floor, ceiling, atMost: grown)
  }

  /// A piece was cut short (a timeout, a reset): the next is a quarter of this one's size.
  package mutating func interrupted() {
    size = max(floor, size / 4)
  }

  /// The server refused a piece as too large (`413`): its limit is the one it names when
  /// that is below the piece, else half the piece.
  /// - Parameters:
  ///   - piece: the refused piece's size.
  ///   - named: the limit the answer names, if any.
  package mutating func refused(piece: Int64, named: Int64?) {
    let smaller = named.flatMap { $0 > 0 && $0 < piece ? $0 : nil } ?? piece / 2
    serverLimit = max(1, min(serverLimit ?? .max, smaller))
  }

  /// The server said the most it takes in one request: kept when it is lower than the limit
  /// known so far. A value that is not positive is ignored.
  /// - Parameter most: the server's limit.
  package mutating func limit(to most: Int64) {
    guard most > 0 else { return }
    serverLimit = min(serverLimit ?? most, most)
  }

  /// The piece `rate` gives: ``target``'s worth, at most `most`, within `low...high`.
  static func sized(by rate: Int64, _ low: Int64, _ high: Int64, atMost most: Int64) -> Int64 {
    clamp(min(bytes(rate, during: target), most), low, high)
  }

  /// The bytes `rate` moves during `duration`.
  static func bytes(_ rate: Int64, during duration: Duration) -> Int64 {
    let value = Double(rate) * seconds(duration)
    return value >= Double(Int64.max) ? .max : Int64(value.rounded(.down))
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
  }

  static func clamp(_ value: Int64, _ low: Int64, _ high: Int64) -> Int64 {
    min(high, max(low, value))
  }
}
