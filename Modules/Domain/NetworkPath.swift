/// The network path as a monitor reports it, shaped like Apple's `NWPath`, with the generation
/// of the monitor that produced it.
public struct NetworkPath: Sendable, Hashable {
  /// Whether a route to the internet exists (a hint, never a gate for sending).
  public var status: PathStatus
  /// Whether the path is likely to cost money.
  public var isExpensive: Bool
  /// Whether the path is in a low-data mode (Linux has no such signal: always false there).
  package var isConstrained: Bool
  /// The generation of the monitor that produced this value; a restart bumps it.
  package var generation: UInt64
  /// The interfaces considered.
  public var interfaces: [NetworkInterface]
  /// Who said each fact, and what the OS's network service said (`PathFactsMerge`); nobody
  /// for a path no merge has seen.
  package var sources = PathSources()

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
  package static let unknown = NetworkPath(status: .unknown)
}
