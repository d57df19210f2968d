import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Which redirects a transport follows, and how (decision 0503).
///
/// Only to the same origin (scheme, host and port), so a bearer token or a body never goes
/// somewhere the caller did not name; at most `maxHops` times. 301 and 302 turn a POST into a
/// GET without a body, 303 turns anything but HEAD into a GET (RFC 9110 §15.4, as browsers and
/// URLSession do); 307 and 308 repeat the method and the body.
package enum RedirectRule {
  /// How many redirects one request follows before the last 3xx is returned as it is.
  package static let maxHops = 10

  /// The request to send next.
  package struct Step: Sendable, Equatable {
    /// The method to use.
    package var method: HTTPRequest.Method
    /// The absolute URL to go to.
    package var url: URL
    /// Whether the body is sent again (307, 308, or a 301/302 of a method other than POST).
    package var keepsBody: Bool
  }

  /// The next request after a response, or nil when the response is the answer.
  /// - Parameters:
  ///   - method: the method of the request that got the response.
  ///   - url: its URL.
  ///   - status: the response's status.
  ///   - location: its `Location` field.
  ///   - hops: how many redirects were already followed.
  /// - Returns: the step, or nil (not a redirect, no usable location, another origin, too many).
  package static func next(
    method: HTTPRequest.Method, url: URL, status: Int, location: String?, hops: Int
  ) -> Step? {
    guard [301, 302, 303, 307, 308].contains(status), hops < maxHops,
      let location = location?.trimmingSpacesAndTabs(), !location.isEmpty,
      let target = URL(string: location, relativeTo: url)?.absoluteURL,
      sameOrigin(url, target)
    else { return nil }
    let becomesGet =
      (status == 303 && method != .head) || ((status == 301 || status == 302) && method == .post)
    if becomesGet { return Step(method: .get, url: target, keepsBody: false) }
    return Step(method: method, url: target, keepsBody: true)
  }

  /// Whether two URLs have the same scheme, host and port (default ports filled in).
  /// - Parameters:
  ///   - first: a URL.
  ///   - second: another.
  /// - Returns: true when they share the origin.
  package static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
    guard let a = origin(first), let b = origin(second) else { return false }
    return a == b
  }

  private static func origin(_ url: URL) -> String? {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host?.lowercased(), !host.isEmpty
    else { return nil }
    let port = url.port ?? (scheme == "https" ? 443 : 80)
    return "\(scheme)://\(host):\(port)"
  }
}
