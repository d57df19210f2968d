import CourierDomain

/// A download the path policy holds back (decision 2610): not fetched, said why.
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

  /// The sentence `courier download` prints.
  package var message: String {
    let size = bytes.map { " (\(CompressionDecision.formatBytes($0)))" } ?? ""
    let what =
      switch wait {
      case .expensive: "the network is metered"
      case .constrained: "the network saves data"
      case .portal: "a Wi-Fi login page holds the network"
      }
    return "Not downloaded: the file\(size) is large and \(what); \(wait.sentence). "
      + (wait == .expensive ? "Add --allow-expensive to download it anyway." : "")
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
}
