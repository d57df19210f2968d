/// Debounces a flapping path. Pure: the driver owns the clock and the timer.
///
/// The first path, and any path after an `unknown` one, is published at once. Afterwards a change is held for `online` (when the
/// new path is satisfied) or `offline` (otherwise); a return to the published path within
/// that time cancels it; a change of the same kind while one is pending replaces the pending
/// path without restarting the timer, so a flood of changes cannot postpone it for ever.
package struct PathDebouncer: Sendable, Hashable {
  /// How long a change must hold before it is reported, by direction.
  package let delays: PathDebounceDelays
  /// The latest published path; nil before the first.
  package private(set) var published: NetworkPath?
  /// The path waiting for its timer.
  package private(set) var pending: NetworkPath?
  private var pendingToken: UInt64 = 0
  private var pendingIsOnline = false

  /// Creates a debouncer.
  /// - Parameter delays: the delays.
  package init(delays: PathDebounceDelays = .standard) { self.delays = delays }

  /// Takes a new path from the monitor.
  /// - Parameter path: the path.
  /// - Returns: what the driver must do.
  package mutating func receive(_ path: NetworkPath) -> PathDebounceAction {
    guard let current = published, current.status != .unknown else {
      // Nothing was known: there is no flap to hide.
      pending = nil
      published = path
      return .publish(path)
    }
    if Self.sameExceptGeneration(path, current) {
      guard pending != nil else { return .none }
      pending = nil
      return .cancelTimer
    }
    let online = path.status == .satisfied
    if pending != nil && pendingIsOnline == online {
      pending = path
      return .none
    }
    pending = path
    pendingIsOnline = online
    pendingToken &+= 1
    return .startTimer(token: pendingToken, after: online ? delays.online : delays.offline)
  }

  /// Called when a timer started by `startTimer` ends.
  /// - Parameter token: the timer's token.
  /// - Returns: the path to publish, or nil when that timer was superseded or cancelled.
  package mutating func fire(_ token: UInt64) -> NetworkPath? {
    guard token == pendingToken, let path = pending else { return nil }
    pending = nil
    published = path
    return path
  }

  private static func sameExceptGeneration(_ lhs: NetworkPath, _ rhs: NetworkPath) -> Bool {
    var copy = lhs
    copy.generation = rhs.generation
    return copy == rhs
  }
}
