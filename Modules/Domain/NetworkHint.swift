/// The application's view of the network path, fed by one monitor generation at a time.
///
/// A restart bumps the generation and forgets the path (`unknown`); an event carrying another
/// generation changes nothing; an event identical to the current path (generation aside)
/// publishes nothing. Request outcomes are kept apart and never overwrite the path.
package struct NetworkHint: Sendable, Hashable {
  /// The generation whose events are accepted.
  package private(set) var generation: UInt64
  /// The latest accepted path (`unknown` until the current generation says something).
  package private(set) var path: NetworkPath
  /// The latest request failure, kept apart from the path: an API failing over a satisfied
  /// path is not a network outage.
  package private(set) var lastRequestFailure: String?

  /// Creates a hint that has heard nothing.
  /// - Parameter generation: the first accepted generation.
  package init(generation: UInt64 = 0) {
    self.generation = generation
    self.path = NetworkPath(status: .unknown, generation: generation)
  }

  /// Whether a request may be attempted: always. The path is a hint for the interface and for
  /// replays; the request itself decides (a satisfied path can fail, an `unknown` or even an
  /// `unsatisfied` one may be stale).
  package var allowsRequests: Bool { true }

  /// Whether an "offline" banner should show: only when a monitor said so, never for `unknown`.
  package var showsOfflineBanner: Bool { path.status == .unsatisfied }

  /// Starts a new monitor generation: events of older ones are ignored from now on and the
  /// path is forgotten.
  /// - Returns: the new generation, to stamp on the new monitor's events.
  package mutating func restart() -> UInt64 {
    generation &+= 1
    path = NetworkPath(status: .unknown, generation: generation)
    return generation
  }

  /// Moves to a new generation keeping the path, after the monitor lost events and took a fresh
  /// snapshot: what was in flight before the snapshot must not land on it.
  /// - Parameter expected: the generation the caller believes is current.
  /// - Returns: the new generation, or nil when `expected` is stale (a newer monitor runs).
  package mutating func resynchronise(from expected: UInt64) -> UInt64? {
    guard expected == generation else { return nil }
    generation &+= 1
    path.generation = generation
    return generation
  }

  /// Takes an event from a monitor.
  /// - Parameter incoming: the path, stamped with its monitor's generation.
  /// - Returns: what to do; empty for a stale or repeated event.
  package mutating func accept(_ incoming: NetworkPath) -> [PathHintEffect] {
    guard incoming.generation == generation else { return [] }
    var comparable = incoming
    comparable.generation = path.generation
    guard comparable != path else { return [] }
    let previous = path
    path = incoming
    var effects: [PathHintEffect] = [.publish(incoming)]
    let wasDown = previous.status == .unsatisfied || previous.status == .requiresConnection
    if wasDown && incoming.status == .satisfied {
      effects.append(.resumePendingWork)
    }
    if previous.status != .unknown
      && (previous.isExpensive != incoming.isExpensive
        || previous.isConstrained != incoming.isConstrained)
    {
      effects.append(
        .transferPolicyChanged(expensive: incoming.isExpensive, constrained: incoming.isConstrained)
      )
    }
    return effects
  }

  /// Takes an event relayed from another hint (a decorator's view of a monitor): a newer
  /// generation is adopted without forgetting the path, an older one is ignored.
  /// - Parameter incoming: the path, stamped with its monitor's generation.
  /// - Returns: what to do; empty for a stale or repeated event.
  package mutating func follow(_ incoming: NetworkPath) -> [PathHintEffect] {
    if incoming.generation > generation {
      generation = incoming.generation
      path.generation = generation
    }
    return accept(incoming)
  }

  /// Records that a request failed, without touching the path.
  /// - Parameter message: what failed, for the interface.
  package mutating func recordRequestFailure(_ message: String) { lastRequestFailure = message }

  /// Records that a request succeeded, clearing the last failure.
  package mutating func recordRequestSuccess() { lastRequestFailure = nil }
}
