/// Whether the device has a usable network path, shaped like Apple's `NWPath.Status` plus the
/// state before anything was heard. A hint for the interface and for replays, never a gate.
///
/// A struct over a private code, so that a status added later (a Wi-Fi login page standing
/// between the device and the internet, say) breaks no one's `switch`: match a status with
/// `==`, or with `switch status { case .satisfied: … default: … }`.
public struct PathStatus: Sendable, Hashable, CustomStringConvertible {
  /// The statuses, for Courier's own exhaustive switches.
  package enum Code: String, Sendable, CaseIterable {
    /// Nothing heard yet.
    case unknown
    /// A usable path exists.
    case satisfied
    /// A path could exist once a connection is brought up.
    case requiresConnection
    /// No usable path.
    case unsatisfied
    /// A path exists, but a captive portal (a hotel's Wi-Fi login page) answers in the
    /// internet's place until someone signs in. Apple's `NWPath` has no such status.
    case captivePortal
  }

  /// Which status this is.
  package let code: Code

  /// A status.
  /// - Parameter code: which.
  package init(_ code: Code) { self.code = code }

  /// The status a name spells (`satisfied`...), or nil.
  /// - Parameter rawValue: the name.
  package init?(rawValue: String) {
    guard let code = Code(rawValue: rawValue) else { return nil }
    self.code = code
  }

  /// Nothing heard yet: never treat it as offline.
  public static let unknown = PathStatus(.unknown)
  /// A usable path exists (which says nothing about the server or the session).
  public static let satisfied = PathStatus(.satisfied)
  /// A path could exist once a connection is brought up (on demand, captive, dial-up).
  public static let requiresConnection = PathStatus(.requiresConnection)
  /// No usable path.
  public static let unsatisfied = PathStatus(.unsatisfied)
  /// A captive portal holds the path: the network answers, the server does not. A hint like the
  /// others: a request someone runs directly is still sent.
  public static let captivePortal = PathStatus(.captivePortal)

  /// Every status, in the order above.
  package static let allCases = Code.allCases.map(PathStatus.init)

  /// The status's name, as logs, metrics and `--json` spell it: `satisfied`,
  /// `requiresConnection`...
  package var rawValue: String { code.rawValue }

  /// `unknown`, `satisfied`, `requiresConnection`, `unsatisfied` or `captivePortal`: the name logs, metrics and
  /// `courier watch --json` use.
  public var description: String { code.rawValue }
}
