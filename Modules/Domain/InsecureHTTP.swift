#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where credentials may go without TLS (decision 2431): a session token, a refresh token or
/// a password goes over `https://` anywhere, over plain `http://` only to a loopback address
/// (127.0.0.0/8, `::1`, `localhost`), unless the configuration allows plain HTTP
/// (`allow_insecure_http`). Anything else is refused before a byte is sent, with an error
/// that names the setting.
package enum InsecureHTTP {
  /// The error code of the refusal (`CourierError.code`).
  package static let code = "insecure_http"

  /// Whether credentials may be sent to a URL.
  /// - Parameters:
  ///   - url: where they would go.
  ///   - allowed: whether the configuration allows plain HTTP to any host.
  /// - Returns: true for `https`, a loopback host, or when allowed.
  package static func mayCarryCredentials(_ url: URL, allowed: Bool) -> Bool {
    if allowed || url.scheme?.lowercased() == "https" { return true }
    return isLoopback(host: url.host ?? "")
  }

  /// Refuses to send credentials to a URL they may not go to.
  /// - Parameters:
  ///   - url: where they would go.
  ///   - allowed: whether the configuration allows plain HTTP to any host.
  ///   - context: what was being done, for logs.
  /// - Throws: `CourierError.invalidInput` with code `insecure_http`, saying which setting
  ///   allows it.
  package static func check(_ url: URL, allowed: Bool, context: String? = nil)
    throws(CourierError)
  {
    guard !mayCarryCredentials(url, allowed: allowed) else { return }
    throw refusal(host: url.host ?? "", context: context)
  }

  /// The refusal for a host.
  /// - Parameters:
  ///   - host: the host the credentials would have gone to.
  ///   - context: what was being done, for logs.
  /// - Returns: the error.
  package static func refusal(host: String, context: String? = nil) -> CourierError {
    CourierError(
      .invalidInput, code: code,
      serverMessage: "Not sending credentials over plain http:// to \(host): anyone on the "
        + "network could read them. Use https://, or, on a network you trust, set "
        + "\"allow_insecure_http\": true in the config file (COURIER_ALLOW_INSECURE_HTTP=1, "
        + "--allow-insecure-http).",
      underlying: "plain http to a host that is not loopback", context: context)
  }

  /// Whether a URL's host is a loopback address: `localhost` (any case, with or without the
  /// root's dot), an IPv4 address of 127.0.0.0/8 in dotted-decimal form, or `::1` (in any
  /// spelling, with or without brackets or a zone, IPv4-mapped loopback included). A name
  /// other than `localhost` is not trusted to resolve to loopback.
  /// - Parameter host: the host, as `URL.host` gives it.
  /// - Returns: true for loopback.
  package static func isLoopback(host: String) -> Bool {
    var name = Substring(host)
    if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
    if let zone = name.firstIndex(of: "%") { name = name[..<zone] }
    if name.hasSuffix(".") { name = name.dropLast() }
    if name.lowercased() == "localhost" { return true }
    if let octets = ipv4(name) { return octets[0] == 127 }
    if let groups = ipv6(name) {
      if groups == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
      // ::ffff:127.x.y.z, an IPv4-mapped loopback address.
      return groups[0..<5].allSatisfy { $0 == 0 } && groups[5] == 0xffff
        && groups[6] >> 8 == 127
    }
    return false
  }

  /// The four octets of a dotted-decimal IPv4 address (no shorthand, no octal), or nil.
  static func ipv4(_ text: Substring) -> [Int]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var octets: [Int] = []
    for part in parts {
      guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
        part.count == 1 || part.first != "0", let value = Int(part), value <= 255
      else { return nil }
      octets.append(value)
    }
    return octets
  }

  /// The eight 16-bit groups of an IPv6 address (`::` shorthand and a trailing IPv4 part
  /// allowed), or nil.
  static func ipv6(_ text: Substring) -> [Int]? {
    guard text.contains(":") else { return nil }
    func groups(_ part: Substring, allowsIPv4: Bool) -> [Int]? {
      if part.isEmpty { return [] }
      var result: [Int] = []
      let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
      for (index, piece) in pieces.enumerated() {
        if allowsIPv4, index == pieces.count - 1, piece.contains("."),
          let octets = ipv4(piece)
        {
          result += [octets[0] << 8 | octets[1], octets[2] << 8 | octets[3]]
          continue
        }
        guard (1...4).contains(piece.count), let value = Int(piece, radix: 16) else { return nil }
        result.append(value)
      }
      return result
    }
    let marks = text.ranges(of: "::")
    switch marks.count {
    case 0:
      guard let all = groups(text, allowsIPv4: true), all.count == 8 else { return nil }
      return all
    case 1:
      guard let head = groups(text[..<marks[0].lowerBound], allowsIPv4: false),
        let tail = groups(text[marks[0].upperBound...], allowsIPv4: true),
        head.count + tail.count < 8
      else { return nil }
      return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    default:
      return nil
    }
  }
}
