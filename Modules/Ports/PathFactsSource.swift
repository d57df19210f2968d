import CourierDomain

/// Where the path's facts beyond links and routes come from: the operating system's network
/// service (NetworkManager or systemd-networkd over the system D-Bus). Merged into a path
/// monitor's paths by `FactsPathMonitor`.
package protocol PathFactsSource: Sendable {
  /// The facts now, asked once (connect, read, disconnect): for `courier status`.
  /// - Returns: the facts, or why there are none (`OSPathFacts.Service.noBus`...).
  func snapshot() async -> OSPathFacts

  /// Watches until the calling task is cancelled: `publish` gets the facts first, then each
  /// change (the service vanishing and coming back, the bus going away and coming back
  /// included), always from one thread, in order.
  /// - Parameter publish: called with each new value.
  func run(publish: @escaping @Sendable (OSPathFacts) -> Void) async
}
