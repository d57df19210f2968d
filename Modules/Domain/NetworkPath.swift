/// One network interface as the path monitor saw it, so a person can see why the path's status
/// is what it is.
public struct NetworkInterface: Sendable, Hashable, Codable {
  /// The interface name (`eth0`).
  public var name: String
  /// What kind of link it is (`ethernet`, `wifi`, `loopback`, `ppp`, `wwan`, `tunnel`, `other`).
  public var kind: String
  /// Whether it is administratively up, running, and has carrier.
  public var isUsable: Bool
  /// Its usable addresses, as text.
  public var addresses: [String]
  /// Whether a unicast default route goes through it.
  public var hasDefaultRoute: Bool
  /// Whether traffic on it is likely to cost money (cellular, tethering, PPP).
  public var isExpensive: Bool

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

/// The network path as a monitor reports it, shaped like Apple's `NWPath`, with the generation
/// of the monitor that produced it.
public struct NetworkPath: Sendable, Hashable, Codable {
  /// Whether a route to the internet exists (a hint, never a gate for sending).
  public var status: PathStatus
  /// Whether the path is likely to cost money.
  public var isExpensive: Bool
  /// Whether the path is in a low-data mode (Linux has no such signal: always false there).
  public var isConstrained: Bool
  /// The generation of the monitor that produced this value; a restart bumps it.
  public var generation: UInt64
  /// The interfaces considered.
  public var interfaces: [NetworkInterface]

  /// Creates a path.
  /// - Parameters:
  ///   - status: the status.
  ///   - isExpensive: whether it is metered.
  ///   - isConstrained: whether it is constrained.
  ///   - generation: the producing monitor's generation.
  ///   - interfaces: the interfaces considered.
  public init(
    status: PathStatus, isExpensive: Bool = false, isConstrained: Bool = false,
    generation: UInt64 = 0, interfaces: [NetworkInterface] = []
  ) {
    self.status = status
    self.isExpensive = isExpensive
    self.isConstrained = isConstrained
    self.generation = generation
    self.interfaces = interfaces
  }

  /// Nothing heard yet.
  public static let unknown = NetworkPath(status: .unknown)
}
