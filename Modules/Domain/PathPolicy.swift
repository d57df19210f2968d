/// What kind of work may use which network path (issue 26, decision 2610): per kind of work
/// (record writes, queued uploads, downloads, plain requests), whether it may go over an
/// expensive (metered) path, a constrained (data-saving) one, and one a captive portal holds.
///
/// Defaults: writes go anywhere the server answers, but never behind a portal (a portal is not
/// the server); queued uploads and downloads larger than ``largeTransferBytes`` wait for an
/// unmetered, unconstrained path, smaller ones go where writes go; a plain request a person runs
/// is never held (the path stays a hint). Pure: table-tested in `PathPolicyTests`.
package struct PathPolicy: Sendable, Equatable {
  /// A kind of work, as the configuration names it (`writes_allowed_on`...).
  package enum Work: String, Sendable, CaseIterable {
    /// A record write replayed from the outbox.
    case writes
    /// A queued upload (or a compound write's file) replayed from the outbox.
    case uploads
    /// A download of a file.
    case downloads
    /// A request a person runs directly: never held.
    case requests
  }

  /// A fact of a path that may hold work back.
  package enum Fact: String, Sendable, CaseIterable {
    /// A captive portal holds the path.
    case captivePortal = "captive_portal"
    /// The path is likely to cost money (metered).
    case expensive
    /// The path is in a data-saving mode.
    case constrained

    /// Whether the path has this fact.
    /// - Parameter path: the path.
    /// - Returns: true when it does.
    package func holds(on path: NetworkPath) -> Bool {
      switch self {
      case .captivePortal: path.status == .captivePortal
      case .expensive: path.isExpensive
      case .constrained: path.isConstrained
      }
    }
  }

  /// Why work waits, for a person (`courier outbox`) and for `--json` (`name`).
  package enum Wait: String, Sendable, Equatable {
    /// A captive portal holds the path.
    case portal = "captive_portal"
    /// The path is metered.
    case expensive
    /// The path saves data.
    case constrained

    /// The sentence `courier outbox` shows.
    package var sentence: String {
      switch self {
      case .portal: "waiting for the Wi-Fi login page to be passed"
      case .expensive: "waiting for an unmetered network"
      case .constrained: "waiting for a network that does not save data"
      }
    }
  }

  /// The facts each kind of work may run on; `requests` is never consulted.
  package var allowed: [Work: Set<Fact>]
  /// Uploads and downloads of at most this many bytes go where writes go
  /// (`large_transfer_mib`, 1 MiB by default).
  package var largeTransferBytes: Int64

  /// The defaults the issue gives.
  package static let standard = PathPolicy(
    allowed: [
      .writes: [.expensive, .constrained], .uploads: [], .downloads: [],
      .requests: Set(Fact.allCases),
    ], largeTransferBytes: 1 << 20)

  /// Creates a policy.
  /// - Parameters:
  ///   - allowed: the facts each kind of work may run on (a missing kind: none).
  ///   - largeTransferBytes: the size above which uploads and downloads follow their own row.
  package init(allowed: [Work: Set<Fact>], largeTransferBytes: Int64) {
    self.allowed = allowed
    self.largeTransferBytes = largeTransferBytes
  }

  /// Whether work may use a path now, or why it waits.
  /// - Parameters:
  ///   - work: the kind of work.
  ///   - bytes: the bytes it moves, when known (uploads, downloads); nil counts as large.
  ///   - path: the path now.
  ///   - allowsExpensive: the work's own permission to use an expensive path (`--allow-expensive`,
  ///     `allowsExpensiveNetworkAccess`).
  /// - Returns: nil when it may go; else the first reason it waits (a portal before a metered
  ///   path before a data-saving one).
  package func wait(
    for work: Work, bytes: Int64? = nil, on path: NetworkPath, allowsExpensive: Bool = false
  ) -> Wait? {
    if work == .requests { return nil }
    var row = work
    if work == .uploads || work == .downloads, let bytes, bytes <= largeTransferBytes {
      row = .writes
    }
    var facts = allowed[row] ?? []
    if allowsExpensive { facts.insert(.expensive) }
    for fact in Fact.allCases where fact.holds(on: path) && !facts.contains(fact) {
      switch fact {
      case .captivePortal: return .portal
      case .expensive: return .expensive
      case .constrained: return .constrained
      }
    }
    return nil
  }

  /// Reads a list of facts as a configuration value spells it: names separated by commas or
  /// blanks (`expensive, constrained`), `none` or nothing for none.
  /// - Parameter text: the value.
  /// - Returns: the facts, or nil naming nothing known (the caller says what is accepted).
  package static func facts(_ text: String) -> Set<Fact>? {
    var facts = Set<Fact>()
    let words = text.split { $0 == "," || $0 == " " || $0 == "\t" }
    for word in words where word.lowercased() != "none" {
      guard let fact = Fact(rawValue: word.lowercased().replacing("-", with: "_")) else {
        return nil
      }
      facts.insert(fact)
    }
    return facts
  }

  /// The work an outbox entry is: a queued upload (with its length and its own permission to
  /// use an expensive path), else a record write.
  /// - Parameter entry: the entry.
  /// - Returns: the kind, the bytes, and whether it may use an expensive path anyway.
  package static func work(of entry: OutboxEntry) -> (
    work: Work, bytes: Int64?, allowsExpensive: Bool
  ) {
    guard entry.key.collection == QueuedUpload.collection else { return (.writes, nil, false) }
    let payload = entry.operation.payload
    let bytes: Int64? =
      if case .number(let number)? = payload?["length"] { number.int64Value } else { nil }
    let allows = payload?[QueuedUpload.allowsExpensiveMember] == .bool(true)
    return (.uploads, bytes, allows)
  }
}
