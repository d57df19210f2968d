/// How many bytes the next request of a resumable upload carries, tus `PATCH` or IETF append
/// (decisions 2704 and 2710): sized by what the server's answers confirm, so that each piece lasts
/// about ``target`` on the link, whatever the link, and never more than ``longest``. A server that
/// keeps nothing of a request cut short (tus with a checksum, a server that buffers each request
/// whole) loses at most one piece to a kill.
///
/// An answer's time is a fixed cost per request (a round trip, a server's fsync) plus the piece's
/// bytes at the link's rate. One answer cannot tell the two apart: its bytes over its time is a
/// lower bound of the rate, and sizes the next piece until pieces of two sizes have been answered.
/// Then a line through the last answers (time against bytes) gives both: the rate is the slope's
/// inverse, the fixed cost the intercept. When the cost is longer than ``target`` (a server's
/// fsync, not a round trip), a piece lasts as long as the cost on the link (so the cost is never
/// more than half of each request), at most ``longest``; else ``target`` at the answer's bytes
/// over its time, as before. Growth is at most fourfold a step; a piece cut short makes the next one a
/// quarter and forgets the answers; nothing is ever larger than the server's limit (IETF
/// `max-append-size`, or what a `413` showed). The floor (64 KiB) is a round trip's worth on a slow
/// link: a fixed cost no longer shrinks pieces to it, since it is measured apart.
///
/// Pure: every edge is a test (`UploadPiecesTests`).
package struct UploadPieces: Sendable, Equatable {
  /// How long a piece lasts at the confirmed rate when no fixed cost per request is known.
  package static let target: Duration = .milliseconds(250)
  /// The longest a piece lasts on the link: what a kill may cost at most.
  package static let longest: Duration = .seconds(1)
  /// The default size of a run's first piece when no rate is known: 256 KiB, a second at
  /// 2 Mbit/s, 52 ms at 40 Mbit/s (growth is fourfold a step from there).
  package static let defaultFirst: Int64 = 256 << 10
  /// The default floor: 64 KiB.
  package static let defaultFloor: Int64 = 64 << 10
  /// How many recent answers the line is drawn through.
  static let window = 4

  /// One confirmed piece: its bytes and the time from its request to its answer.
  struct Answer: Sendable, Equatable {
    let bytes: Double
    let seconds: Double
  }

  /// The smallest piece the rate may give (the server's limit may give less).
  package let floor: Int64
  /// The largest piece.
  package let ceiling: Int64
  /// The most bytes the server takes in one request, once it said so or a `413` showed it.
  package private(set) var serverLimit: Int64?
  /// The link's bytes per second as the answers confirm it; nil before one was measured.
  package private(set) var rate: Int64?
  /// The time each request costs besides its bytes, once pieces of two sizes told it.
  package private(set) var fixedCost: Duration?
  /// The next piece's size before the server's limit and what is left.
  package private(set) var size: Int64
  /// The last answers, oldest first.
  private var answers: [Answer] = []

  /// Creates the sizing of one run.
  /// - Parameters:
  ///   - first: the first piece when `rate` is unknown (at least 1).
  ///   - rate: a rate confirmed earlier (by a process before this one), bytes per second.
  ///   - floor: the smallest piece from the rate: 64 KiB, or `first` when smaller.
  ///   - ceiling: the largest piece: 256 MiB, or `first` when larger.
  package init(
    first: Int64 = defaultFirst, rate: Int64? = nil, floor: Int64? = nil,
    ceiling: Int64? = nil
  ) {
    let first = max(1, first)
    let low = max(1, floor ?? min(first, Self.defaultFloor))
    self.floor = low
    self.ceiling = max(low, ceiling ?? max(first, 256 << 20))
    size = first
    if let rate, rate > 0 {
      self.rate = rate
      size = Self.clamp(Self.bytes(rate, during: Self.target), low, self.ceiling)
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
  /// request started: the rate (and, once pieces of two sizes were answered, the fixed cost
  /// per request) is measured and the next piece sized by it. Nothing changes when either is
  /// not positive, or below a byte a second (a clock that does not move, an answer that
  /// confirmed nothing).
  /// - Parameters:
  ///   - bytes: the bytes the answer confirmed.
  ///   - took: from the request's start to its answer.
  package mutating func confirmed(_ bytes: Int64, took: Duration) {
    let seconds = Self.seconds(took)
    guard bytes > 0, seconds > 0, Double(bytes) / seconds >= 1 else { return }
    answers.append(Answer(bytes: Double(bytes), seconds: seconds))
    if answers.count > Self.window { answers.removeFirst(answers.count - Self.window) }
    let (linkRate, fixed) = Self.fit(answers, knownCost: fixedCost.map(Self.seconds))
    fixedCost = fixed.map { .nanoseconds(Int64(($0 * 1e9).rounded())) }
    let sizing: (rate: Int64, seconds: Double)
    if let fixed, fixed > Self.seconds(Self.target) {
      // A cost longer than a piece (a server's fsync): the link's own rate, pieces as long as
      // the cost, a second at most, so the cost is at most half of each request.
      sizing = (linkRate, min(Self.seconds(Self.longest), fixed))
    } else {
      // Else 2704's rule: this answer's bytes over its time, a quarter second of it. That
      // counts the round trip in, so a piece lasts a little less than a quarter second on the
      // link: a kill costs less, and the round trip is small beside the piece.
      let measured = min(Double(Int64.max / 4), (Double(bytes) / seconds).rounded(.down))
      sizing = (Int64(measured), Self.seconds(Self.target))
    }
    rate = sizing.rate
    let grown = size > Int64.max / 4 ? Int64.max : size * 4
    let sized = Self.bytes(sizing.rate, during: .nanoseconds(Int64(sizing.seconds * 1e9)))
    size = Self.clamp(min(sized, grown), floor, ceiling)
  }

  /// A piece was cut short (a timeout, a reset): the next is a quarter of this one's size, and
  /// the answers before it (and the fixed cost they gave) no longer describe the link.
  package mutating func interrupted() {
    size = max(floor, size / 4)
    answers.removeAll()
    fixedCost = nil
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

  /// The link's rate and the fixed cost per request from the answers: the least-squares line
  /// of time against bytes when their sizes differ enough (the larger at least 1.5 times the
  /// smaller); when the larger pieces took no longer, the slope is bounded by the spread of the
  /// times over the spread of the sizes (at least a millisecond's). Pieces of one size (the sizing settled) keep the
  /// cost measured before, `knownCost`, and take the rate from their time less it. Else the
  /// best rate an answer showed (a lower bound: an answer's time includes the fixed cost) and
  /// no fixed cost. The rate is never below that bound, nor the cost below zero.
  static func fit(_ answers: [Answer], knownCost: Double? = nil) -> (rate: Int64, fixed: Double?) {
    let bound = answers.map { $0.bytes / $0.seconds }.max() ?? 1
    func rate(_ value: Double) -> Int64 {
      Int64(min(Double(Int64.max / 4), value).rounded(.down))
    }
    let sizes = answers.map(\.bytes)
    guard answers.count >= 2, let low = sizes.min(), let high = sizes.max(), high >= 1.5 * low
    else {
      let linkTime = answers.map { $0.seconds - (knownCost ?? 0) }.reduce(0, +)
      guard let knownCost, linkTime > 0 else { return (rate(bound), nil) }
      return (rate(max(bound, sizes.reduce(0, +) / linkTime)), knownCost)
    }
    let count = Double(answers.count)
    let meanBytes = sizes.reduce(0, +) / count
    let meanSeconds = answers.map(\.seconds).reduce(0, +) / count
    var spread = 0.0
    var covariance = 0.0
    for answer in answers {
      spread += (answer.bytes - meanBytes) * (answer.bytes - meanBytes)
      covariance += (answer.bytes - meanBytes) * (answer.seconds - meanSeconds)
    }
    var slope = covariance / spread
    if slope <= 0 {
      // The larger pieces took no longer: the link's share of the time is within the answers'
      // noise, which bounds it (a slope past the times' spread over the sizes' spread would
      // have shown), and what stands out is the cost. Taking no line here (the best rate seen,
      // no cost) sized pieces by a time that was nearly all cost: a 2 s fsync on a fast link
      // shrank them to the floor whenever the noise made the larger piece a little faster
      // (decision 2714).
      let times = answers.map(\.seconds)
      slope = max((times.max() ?? 0) - (times.min() ?? 0), 0.001) / (high - low)
    }
    return (rate(max(bound, 1 / slope)), max(0, meanSeconds - slope * meanBytes))
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
