/// Who said one fact of the path: `courier status` and `courier watch --json` print it beside
/// the fact.
package enum PathFactSource: String, Sendable, Hashable {
  /// The netlink monitor (links, addresses, routes; interface kinds for `expensive`).
  case netlink
  /// NetworkManager over the system D-Bus.
  case networkManager = "NetworkManager"
  /// systemd-networkd over the system D-Bus.
  case networkd
  /// The configuration (`constrained_interfaces`).
  case configuration
  /// Courier's own captive-portal probe.
  case probe
  /// Nobody: the default value stands (Linux cannot tell).
  case none
}

/// Where each of a path's facts came from, and what the OS's network service said.
package struct PathSources: Sendable, Hashable {
  /// Who set `status`.
  package var status: PathFactSource
  /// Who set `isExpensive`.
  package var expensive: PathFactSource
  /// Who set `isConstrained`.
  package var constrained: PathFactSource
  /// What NetworkManager or networkd said, or why nothing.
  package var os: OSPathFacts

  /// Sources.
  /// - Parameters:
  ///   - status: who set the status.
  ///   - expensive: who set `isExpensive`.
  ///   - constrained: who set `isConstrained`.
  ///   - os: what the OS's network service said.
  package init(
    status: PathFactSource = .none, expensive: PathFactSource = .none,
    constrained: PathFactSource = .none, os: OSPathFacts = .off
  ) {
    self.status = status
    self.expensive = expensive
    self.constrained = constrained
    self.os = os
  }
}

/// Which links count as constrained (`constrained_interfaces`): NetworkManager has no low-data
/// mode and Linux no such flag, so the user names them. Each entry is an interface name
/// (`wwan0`), a name prefix ending in `*` (`usb*`), a netlink link kind (`wwan`, `ppp`, `wifi`)
/// or a NetworkManager connection type (`gsm`, `bluetooth`, `802-11-wireless`). The path is
/// constrained when an interface carrying it, or NetworkManager's primary connection, matches
/// one.
package struct ConstrainedRule: Sendable, Hashable {
  /// The entries, as configured.
  package let entries: [String]

  /// A rule.
  /// - Parameter entries: the entries.
  package init(entries: [String] = []) { self.entries = entries }

  /// Parses the configured list: entries separated by commas, blanks around them ignored.
  /// - Parameter text: e.g. `wwan0, usb*, gsm`.
  /// - Returns: the rule, or a sentence saying which entry is wrong.
  package static func parse(_ text: String) -> Result<ConstrainedRule, RuleError> {
    if text.allSatisfy({ $0 == " " || $0 == "\t" }) { return .success(ConstrainedRule()) }
    var entries: [String] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      var slice = part[...]
      while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
      while slice.last == " " || slice.last == "\t" { slice.removeLast() }
      let entry = String(slice)
      if entry.isEmpty {
        return .failure(RuleError(message: "has an empty entry between commas."))
      }
      let star = entry.firstIndex(of: "*")
      let allowed = entry.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII
          && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
            || "-_.:@*".unicodeScalars.contains(scalar))
      }
      guard allowed, star == nil || star == entry.index(before: entry.endIndex), entry != "*"
      else {
        return .failure(
          RuleError(
            message: "“\(entry)” is not an interface name, a name prefix ending in *, a link "
              + "kind or a connection type."))
      }
      entries.append(entry)
    }
    return .success(ConstrainedRule(entries: entries))
  }

  /// Why a configured list was refused.
  package struct RuleError: Error, Sendable, Hashable {
    /// The sentence, to follow the key's name.
    package let message: String
  }

  /// Whether any entry matches a name, kind or type.
  /// - Parameter candidates: interface names, link kinds, connection types.
  /// - Returns: true when one matches.
  package func matches(_ candidates: [String]) -> Bool {
    for entry in entries {
      for candidate in candidates where !candidate.isEmpty {
        if entry.hasSuffix("*") {
          if candidate.hasPrefix(entry.dropLast()) { return true }
        } else if candidate == entry {
          return true
        }
      }
    }
    return false
  }
}

/// The netlink monitor's path with what the OS's network service and the configuration add:
/// pure, so the mapping is tested without a bus (decision 2601).
package enum PathFactsMerge {
  /// Merges.
  ///
  /// - `isExpensive`: NetworkManager's `Metered` when it knows (yes and guess-yes count as
  ///   yes), else netlink's guess from the link kinds (cellular, PPP).
  /// - `status`: `captivePortal` when NetworkManager's connectivity is `portal` and netlink
  ///   sees a path (satisfied) or has not answered yet; else netlink's. NetworkManager's
  ///   `none` and `limited` never override netlink: a server on the local network may answer.
  /// - `isConstrained`: the rule over the carrying interfaces' names and kinds and the primary
  ///   connection's type and interface; false from nobody when no rule is configured.
  ///
  /// - Parameters:
  ///   - path: the netlink monitor's path (its generation is kept).
  ///   - os: what NetworkManager or networkd said.
  ///   - rule: the configured constrained rule.
  /// - Returns: the merged path, with each fact's source.
  package static func merge(_ path: NetworkPath, with os: OSPathFacts, rule: ConstrainedRule)
    -> NetworkPath
  {
    var merged = path
    var sources = PathSources(status: .netlink, expensive: .netlink, os: os)
    if os.service == .networkManager, let expensive = os.metered.isExpensive {
      merged.isExpensive = expensive
      sources.expensive = .networkManager
    }
    if os.service == .networkManager, os.connectivity == .portal,
      path.status == .satisfied || path.status == .unknown
    {
      merged.status = .captivePortal
      sources.status = .networkManager
    }
    if rule.entries.isEmpty {
      merged.isConstrained = false
      sources.constrained = .none
    } else {
      let carrying = path.interfaces.filter {
        $0.isUsable && $0.hasDefaultRoute && !$0.addresses.isEmpty
      }
      var candidates = carrying.map(\.name) + carrying.map(\.kind)
      if os.service == .networkManager, let primary = os.primary {
        candidates += [primary.type, primary.interface]
      }
      merged.isConstrained = rule.matches(candidates)
      sources.constrained = .configuration
    }
    merged.sources = sources
    return merged
  }
}
