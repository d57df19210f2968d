#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the operating system's network service says about the path (NetworkManager or
/// systemd-networkd over the system D-Bus), read by the D-Bus adapter and merged into the
/// netlink monitor's path by ``PathFactsMerge``. Pure values: the mapping is tested without a
/// bus.
package struct OSPathFacts: Sendable, Hashable {
  /// Who answered, or why nobody did.
  package enum Service: Sendable, Hashable {
    /// Not asked: the configuration says `path_facts: none`, or the path monitor is not
    /// netlink.
    case off
    /// The system bus could not be reached (the reason, for `courier status`).
    case noBus(String)
    /// The bus answered but neither wanted service owns its name (not running, or restarting).
    case noService
    /// NetworkManager answered.
    case networkManager
    /// systemd-networkd answered.
    case networkd
  }

  /// NetworkManager's `NMMetered`: whether the primary connection costs money.
  package enum Metered: UInt32, Sendable, Hashable {
    case unknown = 0
    case yes = 1
    case no = 2
    case guessYes = 3
    case guessNo = 4

    /// As NetworkManager's documentation spells it: `unknown`, `yes`, `no`, `guess-yes`,
    /// `guess-no`.
    package var name: String {
      switch self {
      case .unknown: "unknown"
      case .yes: "yes"
      case .no: "no"
      case .guessYes: "guess-yes"
      case .guessNo: "guess-no"
      }
    }

    /// Whether the link counts as expensive: yes and guess-yes (NetworkManager's documentation:
    /// "guess" values are to be treated as the plain ones); nil when NetworkManager does not
    /// know.
    package var isExpensive: Bool? {
      switch self {
      case .unknown: nil
      case .yes, .guessYes: true
      case .no, .guessNo: false
      }
    }
  }

  /// NetworkManager's `NMConnectivityState`, from its own connectivity check.
  package enum Connectivity: UInt32, Sendable, Hashable {
    case unknown = 0
    case none = 1
    case portal = 2
    case limited = 3
    case full = 4

    /// `unknown`, `none`, `portal`, `limited` or `full`.
    package var name: String {
      switch self {
      case .unknown: "unknown"
      case .none: "none"
      case .portal: "portal"
      case .limited: "limited"
      case .full: "full"
      }
    }
  }

  /// NetworkManager's primary connection: the one holding the default route.
  package struct PrimaryConnection: Sendable, Hashable {
    /// Its name (`Id`, e.g. "Hotel Wi-Fi").
    package var id: String
    /// Its type (`Type`, e.g. `802-11-wireless`, `gsm`, `bluetooth`).
    package var type: String
    /// Its first device's interface (`wlan0`), empty when unknown.
    package var interface: String

    /// A primary connection.
    /// - Parameters:
    ///   - id: its name.
    ///   - type: its type.
    ///   - interface: its first device's interface.
    package init(id: String, type: String, interface: String) {
      self.id = id
      self.type = type
      self.interface = interface
    }
  }

  /// An RFC 8908 captive-portal API the network advertised in the primary connection's DHCPv4
  /// lease (RFC 8910), as NetworkManager reports it (decision 2606).
  package struct CaptivePortalAPI: Sendable, Hashable {
    /// The API's URI, as advertised.
    package var url: String
    /// The option's name in NetworkManager's `Dhcp4Config.Options`: `captive_portal` or
    /// `default_url` (option 114), `v4_captive_portal` (RFC 7710's 160).
    package var option: String

    /// An advertised API.
    /// - Parameters:
    ///   - url: its URI.
    ///   - option: the option's name in NetworkManager's lease options.
    package init(url: String, option: String) {
      self.url = url
      self.option = option
    }

    /// Where it came from, for a person: e.g. `DHCPv4 option 114 (default_url)`.
    package var source: String {
      let number = option == "v4_captive_portal" ? "160" : "114"
      return "DHCPv4 option \(number) (\(option))"
    }

    /// The URL Courier asks, or nil with why not: RFC 8908 §4 has the API reached over
    /// `https` only, and a network's say-so is not a reason to send anything elsewhere.
    package var usable: Result<URL, RejectedURL> {
      guard let url = URL(string: url), url.scheme?.lowercased() == "https", url.host != nil
      else { return .failure(RejectedURL()) }
      return .success(url)
    }

    /// An advertised URL that is not an `https` URL (RFC 8908 §4).
    package struct RejectedURL: Error, Hashable {}
  }

  /// Who answered.
  package var service: Service
  /// NetworkManager's `Metered` (`unknown` from any other service).
  package var metered: Metered
  /// NetworkManager's `Connectivity` (`unknown` from any other service).
  package var connectivity: Connectivity
  /// NetworkManager's `PrimaryConnection`, nil when it has none.
  package var primary: PrimaryConnection?
  /// The captive-portal API NetworkManager's DHCPv4 lease advertised, nil when none.
  package var captivePortalAPI: CaptivePortalAPI?
  /// systemd-networkd's `OnlineState` (`online`, `partial`, `offline`), empty otherwise.
  package var onlineState: String
  /// systemd-networkd's `OperationalState` (`routable`, `degraded`...), empty otherwise.
  package var operationalState: String

  /// Facts.
  /// - Parameters:
  ///   - service: who answered.
  ///   - metered: NetworkManager's `Metered`.
  ///   - connectivity: NetworkManager's `Connectivity`.
  ///   - primary: NetworkManager's primary connection.
  ///   - onlineState: networkd's `OnlineState`.
  ///   - operationalState: networkd's `OperationalState`.
  ///   - captivePortalAPI: the captive-portal API the DHCPv4 lease advertised.
  package init(
    service: Service, metered: Metered = .unknown, connectivity: Connectivity = .unknown,
    primary: PrimaryConnection? = nil, onlineState: String = "", operationalState: String = "",
    captivePortalAPI: CaptivePortalAPI? = nil
  ) {
    self.captivePortalAPI = captivePortalAPI
    self.service = service
    self.metered = metered
    self.connectivity = connectivity
    self.primary = primary
    self.onlineState = onlineState
    self.operationalState = operationalState
  }

  /// Not asked.
  package static let off = OSPathFacts(service: .off)

  /// The service's name as `courier status` and `--json` print it: `NetworkManager`,
  /// `networkd`, `none` (no service on the bus), `no-bus` or `off`.
  package var serviceName: String {
    switch service {
    case .off: "off"
    case .noBus: "no-bus"
    case .noService: "none"
    case .networkManager: "NetworkManager"
    case .networkd: "networkd"
    }
  }

  /// One sentence for `courier status`: what the service says, or why nothing is known.
  package var sentence: String {
    switch service {
    case .off:
      return "OS path facts: off (path_facts is none): metered and portal states come from "
        + "netlink alone"
    case .noBus(let why):
      return "no system D-Bus: metered and portal states come from netlink alone (\(why))"
    case .noService:
      return "neither NetworkManager nor systemd-networkd is on the system bus: metered and "
        + "portal states come from netlink alone"
    case .networkManager:
      var text =
        "NetworkManager: connectivity \(connectivity.name), metered \(metered.name)"
      if let primary {
        let on = primary.interface.isEmpty ? "" : " on \(primary.interface)"
        text += ", primary connection “\(primary.id)” (\(primary.type)\(on))"
      } else {
        text += ", no primary connection"
      }
      if let api = captivePortalAPI {
        text += "; its DHCPv4 lease names a captive-portal API: \(api.url) (\(api.source))"
      }
      return text
    case .networkd:
      return "systemd-networkd: online state \(onlineState.isEmpty ? "unknown" : onlineState), "
        + "operational state \(operationalState.isEmpty ? "unknown" : operationalState) "
        + "(networkd says nothing of metered links or portals)"
    }
  }
}
