#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What Courier's captive-portal probe concludes from one answer (decision 2612): the answer
/// the probe URL should give (204, or 200 with `{"ok": true}`, the server's `GET /health`), an
/// RFC 8908 captive-portal API's `{"captive": …}`, or anything else. Pure: table-tested in
/// `PortalCheckTests`.
package enum PortalCheck: Sendable, Equatable {
  /// The answer is the expected one: no portal holds the path.
  case open
  /// A portal holds the path; `userPortalURL` is its login page when it said.
  case portal(userPortalURL: String?)
  /// Nothing can be concluded (no answer, a server error): the path stays as it was.
  case unknown

  /// The probe URL's answer.
  /// - Parameters:
  ///   - status: the status code.
  ///   - body: the body's bytes (the first few KiB are enough).
  ///   - location: the `Location` field, for a redirect (the login page).
  /// - Returns: `open` for 204 or 200 `{"ok": true}`; `unknown` for a 5xx but 511 (the server
  ///   failing is not a portal: replays would wait for nothing); `portal` for anything else (a
  ///   redirect, 511, a page that is not the expected one).
  package static func probeAnswer(status: Int, body: Data, location: String? = nil)
    -> PortalCheck
  {
    if status == 204 { return .open }
    if status == 200, let json = try? JSONValue(parsing: body), json["ok"] == .bool(true) {
      return .open
    }
    // 511 Network Authentication Required is a portal's own status (RFC 6585).
    if (500...599).contains(status), status != 511 { return .unknown }
    return .portal(userPortalURL: (300...399).contains(status) ? location : nil)
  }

  /// An RFC 8908 captive-portal API's answer (`application/captive+json`).
  /// - Parameters:
  ///   - status: the status code.
  ///   - contentType: the `Content-Type` field.
  ///   - body: the body's bytes.
  /// - Returns: `portal` (with `user-portal-url`) when `captive` is true, `open` when false,
  ///   `unknown` for any other answer (the probe then decides).
  package static func captiveAPIAnswer(status: Int, contentType: String?, body: Data)
    -> PortalCheck
  {
    let media = contentType?.split(separator: ";").first.map {
      $0.filter { $0 != " " && $0 != "\t" }.lowercased()
    }
    guard status == 200, media == "application/captive+json" || media == "application/json",
      let json = try? JSONValue(parsing: body), case .bool(let captive)? = json["captive"]
    else { return .unknown }
    return captive ? .portal(userPortalURL: json["user-portal-url"]?.stringValue) : .open
  }

  /// The path as the probe leaves it: a usable path a portal holds becomes `captivePortal`, one
  /// the probe found open again `satisfied`; any other path is left as it is.
  /// - Parameters:
  ///   - path: the monitor's path.
  ///   - portal: whether the last probe of this path found a portal.
  /// - Returns: the path to publish.
  package static func path(_ path: NetworkPath, portal: Bool) -> NetworkPath {
    var result = path
    if portal, path.status == .satisfied || path.status == .unknown {
      result.status = .captivePortal
      result.sources.status = .probe
    }
    return result
  }
}
