import CourierDomain

/// A download for offline reading the path policy holds back (decisions 2610, 2604): not
/// fetched, said why. A download a person runs (`courier download`) is never held: it gets a
/// ``note(_:on:)`` instead.
package struct PathHeld: Error {
  /// Why it waits.
  package var wait: PathPolicy.Wait
  /// The bytes it would have fetched, when the server said.
  package var bytes: Int64?

  /// A download held back.
  /// - Parameters:
  ///   - wait: why.
  ///   - bytes: its size, when known.
  package init(wait: PathPolicy.Wait, bytes: Int64?) {
    self.wait = wait
    self.bytes = bytes
  }
}

extension PathHeld {
  /// The check a download runs once the server said its size (`Downloads.fetch(admit:)`): throws
  /// a `PathHeld` when the configured policy holds a download of that size on `path`.
  /// - Parameters:
  ///   - config: the policy and whether metered paths are allowed.
  ///   - path: the path now.
  /// - Returns: the check.
  package static func check(
    _ config: CourierConfig, on path: NetworkPath
  ) -> @Sendable (Int64?) throws -> Void {
    let policy = config.pathPolicy
    let allowsExpensive = config.allowsExpensiveNetworkAccess
    return { bytes in
      if let wait = policy.wait(
        for: .downloads, bytes: bytes, on: path, allowsExpensive: allowsExpensive)
      {
        throw PathHeld(wait: wait, bytes: bytes)
      }
    }
  }

  /// The one line `courier download` prints before a download the policy would hold if it were
  /// background work (decision 2604): the download goes at once, the person is told what it
  /// costs. Nil when the policy would let it go, and behind a portal (the reply's check says
  /// that one).
  /// - Parameters:
  ///   - config: the policy and whether metered paths are allowed.
  ///   - path: the path now.
  /// - Returns: a function of the bytes the server announced giving the note, or nil.
  package static func note(_ config: CourierConfig, on path: NetworkPath)
    -> @Sendable (Int64?)
    -> String?
  {
    let policy = config.pathPolicy
    let allowsExpensive = config.allowsExpensiveNetworkAccess
    return { bytes in
      let size = bytes.map { ": \(CompressionDecision.formatBytes($0))" } ?? ""
      switch policy.wait(
        for: .downloads, bytes: bytes, on: path, allowsExpensive: allowsExpensive)
      {
      case .expensive?: return "on a metered network\(size)"
      case .constrained?: return "on a network that saves data\(size)"
      case .portal?, nil: return nil
      }
    }
  }
}
