/// Whether the device has a usable network path, shaped like Apple's `NWPath.Status` plus the
/// state before anything was heard. A hint for the interface and for replays, never a gate.
public enum PathStatus: String, Sendable, Hashable, Codable, CaseIterable {
  /// Nothing heard yet: never treat as offline.
  case unknown
  /// A usable path exists (which says nothing about the server or the session).
  case satisfied
  /// A path could exist once a connection is brought up (on demand, captive, dial-up).
  case requiresConnection
  /// No usable path.
  case unsatisfied
}
