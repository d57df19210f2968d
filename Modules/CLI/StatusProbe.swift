import CourierCore
import CourierDomain
import CourierLinux
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What `courier status`'s one captive-portal check found (decision 2607): Courier's own probe,
/// run once within its deadline, so that status can say "captive portal" without waiting for a
/// write's reply; `--no-probe` or `portal_probe_url: none` skip it.
struct StatusProbe {
  /// Whether the probe found a portal holding the path.
  var isPortal = false
  /// What it found, for a person: lines, each ending with a newline.
  var lines = ""
  /// What it found, as the `"probe"` member of `status --json`.
  var json = "{}"

  /// Checks the path once, unless told not to or the path is not usable.
  /// - Parameters:
  ///   - path: the path status found.
  ///   - probing: false for `--no-probe`.
  ///   - context: the command's context (its configuration and base transport).
  /// - Returns: what the check found.
  static func run(on path: NetworkPath, probing: Bool, context: CommandContext) async
    -> StatusProbe
  {
    var object: [String: JSONValue] = [:]
    let api = apiLine(path, configured: context.environment.config.captivePortalAPI, into: &object)
    var result = await check(path, probing: probing, context: context, into: &object)
    result.lines += api
    result.json = JSONLine.encode(object)
    return result
  }

  /// The check itself, its verdict added to the JSON object.
  private static func check(
    _ path: NetworkPath, probing: Bool, context: CommandContext,
    into object: inout [String: JSONValue]
  ) async -> StatusProbe {
    var result = StatusProbe()
    guard probing else {
      object["verdict"] = .string("skipped")
      result.lines = "portal probe: not run (--no-probe)\n"
      return result
    }
    guard let probe = CourierSession.portalProbe(context.environment) else {
      object["verdict"] = .string("off")
      result.lines = "portal probe: off (portal_probe_url is none)\n"
      return result
    }
    object["url"] = .string(probe.url.absoluteString)
    guard [PathStatus.satisfied, .unknown, .captivePortal].contains(path.status) else {
      object["verdict"] = .string("no_path")
      result.lines = "portal probe: not run: no usable path\n"
      return result
    }
    let shown = LogText.escaped(probe.url.absoluteString)
    switch await probe.check(advertised: PortalProbe.advertised(on: path)) {
    case .open:
      object["verdict"] = .string("open")
      result.lines = "portal probe: open: \(shown) answered as the server should\n"
    case .portal(let page):
      result.isPortal = true
      object["verdict"] = .string("captive_portal")
      if let page { object["user_portal_url"] = .string(page) }
      let login = page.map { " (its login page: \(LogText.escaped($0)))" } ?? ""
      result.lines =
        "portal probe: a captive portal answers in the server's place\(login): sign in to the "
        + "network, then run courier status again\n"
    case .unknown:
      object["verdict"] = .string("unknown")
      result.lines =
        "portal probe: nothing concluded: \(shown) did not answer within "
        + "\(probe.deadline.components.seconds) s, or the server failed\n"
    }
    return result
  }

  /// The line naming the RFC 8908 API the probe asks first, and where it came from; empty when
  /// there is none. Adds `"captive_portal_api"` to the JSON object.
  private static func apiLine(
    _ path: NetworkPath, configured: URL?, into object: inout [String: JSONValue]
  ) -> String {
    let advertised = path.sources.os.captivePortalAPI
    if let configured {
      object["captive_portal_api"] = .object([
        "url": .string(configured.absoluteString), "source": .string("configuration"),
      ])
      let also = advertised.map {
        "; the network's DHCPv4 lease names \(LogText.escaped($0.url)), not asked"
      }
      return "captive-portal API (RFC 8908): \(LogText.escaped(configured.absoluteString)) "
        + "(from the configuration\(also ?? ""))\n"
    }
    guard let advertised else { return "" }
    var api: [String: JSONValue] = [
      "url": .string(advertised.url), "source": .string("NetworkManager"),
      "option": .string(advertised.option),
    ]
    let url = LogText.escaped(advertised.url)
    let from = "advertised by the network: \(advertised.source), via NetworkManager"
    guard case .success = advertised.usable else {
      api["asked"] = .bool(false)
      object["captive_portal_api"] = .object(api)
      return "captive-portal API (RFC 8908): \(url) (\(from)), not asked: RFC 8908 has it "
        + "reached over https only\n"
    }
    api["asked"] = .bool(true)
    object["captive_portal_api"] = .object(api)
    return "captive-portal API (RFC 8908): \(url) (\(from))\n"
  }
}
