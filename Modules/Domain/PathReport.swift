#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Text for people and JSON for scripts describing a `NetworkPath` and why it is what it is,
/// for `courier status` and `courier watch`. Pure: the time is an input.
package enum PathReport {
  /// One line: the status and the reason.
  /// - Parameter path: the path.
  /// - Returns: e.g. `satisfied via eth0 (10.0.0.2/24), expensive`.
  package static func summary(_ path: NetworkPath) -> String {
    var flags = ""
    if path.isExpensive { flags += ", expensive" + from(path.sources.expensive) }
    if path.isConstrained { flags += ", constrained" + from(path.sources.constrained) }
    switch path.status.code {
    case .unknown:
      return "unknown: nothing heard from the path monitor yet" + flags
    case .satisfied:
      let through = path.interfaces.filter(isCarrying)
      let names = through.map { "\($0.name) (\(join($0.addresses, ", ")))" }
      let via = names.isEmpty ? "" : " via " + join(names, "; ")
      return "satisfied" + via + flags
    case .captivePortal:
      return "captivePortal: a login page answers in the server's place"
        + from(path.sources.status) + flags
    case .requiresConnection, .unsatisfied:
      let reasons = path.interfaces.map { "\($0.name) \(reason($0))" }
      let why = reasons.isEmpty ? "no network interface" : join(reasons, "; ")
      return "\(path.status.rawValue): " + why + flags
    }
  }

  /// Several lines: the status, the flags, then one line per interface considered.
  /// - Parameter path: the path.
  /// - Returns: the text, lines separated by `\n`, no trailing newline.
  package static func details(_ path: NetworkPath) -> String {
    let sources = path.sources
    let constrained =
      sources.constrained == .none
      ? "no (Linux cannot tell; no constrained_interfaces configured)"
      : "\(path.isConstrained ? "yes" : "no") (from the configuration)"
    var lines = [
      "status: \(path.status.rawValue) (generation \(path.generation)"
        + (sources.status == .none ? "" : ", from \(sources.status.rawValue)") + ")",
      "expensive: \(path.isExpensive ? "yes" : "no")"
        + (sources.expensive == .none ? "" : " (from \(sources.expensive.rawValue))")
        + ", constrained: \(constrained)",
    ]
    if sources.status != .none { lines.append(sources.os.sentence) }
    if path.interfaces.isEmpty {
      lines.append(path.status == .unknown ? "no interface seen yet" : "no network interface")
    }
    for interface in path.interfaces {
      let addresses =
        interface.addresses.isEmpty ? "none" : join(interface.addresses, ", ")
      lines.append(
        "\(interface.name) (\(interface.kind)\(interface.isExpensive ? ", expensive" : "")): "
          + "\(interface.isUsable ? "up" : "down"), addresses \(addresses), "
          + "\(interface.hasDefaultRoute ? "default route" : "no default route")"
          + (isCarrying(interface) ? "" : ": \(reason(interface))"))
    }
    return join(lines, "\n")
  }

  /// The JSON object `courier watch --json` prints, one per line, keys in a fixed order.
  /// - Parameters:
  ///   - path: the path.
  ///   - date: when it was observed.
  ///   - probe: a JSON object saying what Courier's portal probe found (`courier status`),
  ///     put before `"interfaces"` as `"probe"`; nil for none.
  /// - Returns: `{"at":…,"generation":…,"status":…,"expensive":…,"constrained":…,
  ///   "sources":{…},"os":{…},"interfaces":[…]}` on one line.
  package static func json(_ path: NetworkPath, at date: Date, probe: String? = nil) -> String {
    let interfaces = path.interfaces.map { interface in
      "{\"name\":\(quote(interface.name)),\"kind\":\(quote(interface.kind)),"
        + "\"usable\":\(interface.isUsable),"
        + "\"addresses\":[\(join(interface.addresses.map(quote), ","))],"
        + "\"default_route\":\(interface.hasDefaultRoute),\"expensive\":\(interface.isExpensive)}"
    }
    return "{\"at\":\(quote(rfc3339(date))),\"generation\":\(path.generation),"
      + "\"status\":\(quote(path.status.rawValue)),\"expensive\":\(path.isExpensive),"
      + "\"constrained\":\(path.isConstrained),"
      + "\"sources\":{\"status\":\(quote(path.sources.status.rawValue)),"
      + "\"expensive\":\(quote(path.sources.expensive.rawValue)),"
      + "\"constrained\":\(quote(path.sources.constrained.rawValue))},"
      + "\"os\":\(json(path.sources.os)),"
      + (probe.map { "\"probe\":\($0)," } ?? "")
      + "\"interfaces\":[\(join(interfaces, ","))]}"
  }

  /// What the OS's network service said, as `--json` prints it: the service, then its facts.
  private static func json(_ os: OSPathFacts) -> String {
    var members = ["\"service\":\(quote(os.serviceName))"]
    switch os.service {
    case .off, .noService: break
    case .noBus(let why): members.append("\"why\":\(quote(why))")
    case .networkManager:
      members.append("\"metered\":\(quote(os.metered.name))")
      members.append("\"connectivity\":\(quote(os.connectivity.name))")
      if let primary = os.primary {
        members.append(
          "\"primary\":{\"id\":\(quote(primary.id)),\"type\":\(quote(primary.type)),"
            + "\"interface\":\(quote(primary.interface))}")
      } else {
        members.append("\"primary\":null")
      }
      if let api = os.captivePortalAPI {
        members.append(
          "\"captive_portal_api\":{\"url\":\(quote(api.url)),\"option\":\(quote(api.option))}")
      }
    case .networkd:
      members.append("\"online_state\":\(quote(os.onlineState))")
      members.append("\"operational_state\":\(quote(os.operationalState))")
    }
    return "{" + join(members, ",") + "}"
  }

  /// ` (NetworkManager)` after a fact someone other than netlink set; empty otherwise.
  private static func from(_ source: PathFactSource) -> String {
    source == .netlink || source == .none ? "" : " (\(source.rawValue))"
  }

  /// The parts with the separator between them: `joined(separator:)` by hand, as the
  /// standard library's is called unspecialised and its first use per collection type costs a
  /// scan of every protocol conformance in the binary.
  static func join(_ parts: [String], _ separator: String) -> String {
    var text = ""
    for (index, part) in parts.enumerated() {
      if index > 0 { text += separator }
      text += part
    }
    return text
  }

  /// RFC 3339 in UTC with milliseconds (rounded to the nearest), as the backend contract
  /// writes timestamps.
  /// - Parameter date: the time.
  /// - Returns: e.g. `2026-11-30T10:15:00.123Z`.
  package static func rfc3339(_ date: Date) -> String {
    let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
    let (days, msOfDay) = floorDivide(millis, 86_400_000)
    let (year, month, day) = civil(fromDays: days)
    let hour = msOfDay / 3_600_000
    let minute = msOfDay / 60_000 % 60
    let second = msOfDay / 1000 % 60
    let ms = msOfDay % 1000
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):"
      + "\(pad(second, 2)).\(pad(ms, 3))Z"
  }

  private static func isCarrying(_ interface: NetworkInterface) -> Bool {
    interface.isUsable && interface.hasDefaultRoute && !interface.addresses.isEmpty
  }

  private static func reason(_ interface: NetworkInterface) -> String {
    if !interface.isUsable { return "is down or has no carrier" }
    if interface.addresses.isEmpty { return "has no usable address" }
    if !interface.hasDefaultRoute { return "has no default route" }
    return "is usable"
  }

  private static func quote(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
  }

  private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    return (quotient, value - quotient * divisor)
  }

  // Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
  private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
