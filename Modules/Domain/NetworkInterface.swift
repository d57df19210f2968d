/// One network interface as the path monitor saw it, so a person can see why the path's status
/// is what it is.
public struct NetworkInterface: Sendable, Hashable {
  /// The interface name (`eth0`).
  public var name: String
  /// What kind of link it is (`ethernet`, `wifi`, `loopback`, `ppp`, `wwan`, `tunnel`, `other`).
  package var kind: String
  /// Whether it is administratively up, running, and has carrier.
  public var isUsable: Bool
  /// Its usable addresses, as text.
  package var addresses: [String]
  /// Whether a unicast default route goes through it.
  package var hasDefaultRoute: Bool
  /// Whether traffic on it is likely to cost money (cellular, tethering, PPP).
  package var isExpensive: Bool

  /// Creates an interface description.
  /// - Parameters:
  ///   - name: the name.
  ///   - kind: the kind of link.
  ///   - isUsable: up, running and with carrier.
  ///   - addresses: usable addresses.
  ///   - hasDefaultRoute: whether a default route goes through it.
  ///   - isExpensive: whether it is metered.
  public init(
    name: String, kind: String, isUsable: Bool, addresses: [String] = [],
    hasDefaultRoute: Bool = false, isExpensive: Bool = false
  ) {
    self.name = name
    self.kind = kind
    self.isUsable = isUsable
    self.addresses = addresses
    self.hasDefaultRoute = hasDefaultRoute
    self.isExpensive = isExpensive
  }
}
