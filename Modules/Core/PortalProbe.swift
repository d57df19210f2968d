import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Courier's own captive-portal check (issue 26, decision 2612): an RFC 8908 captive-portal API
/// when one is known (`{"captive": true, "user-portal-url": …}`, `application/captive+json`),
/// then a URL expected to answer as the contract says (the server's `GET /health`: 200
/// `{"ok": true}`; a configured URL may answer 204). A redirect or any other answer is a
/// portal; no answer or a server error concludes nothing. The API is the configured one, else
/// the one the network advertised (decision 2606). One attempt each, through the base
/// transport (no token: a portal must never see one), within a short deadline.
package struct PortalProbe: Sendable {
  /// The transport the checks go through: the base one, without retries or credentials; asked
  /// for at the first check (a command that never probes does not build it).
  package let transport: @Sendable () -> any Transport
  /// The URL expected to answer 204 or 200 `{"ok": true}`.
  package let url: URL
  /// An RFC 8908 captive-portal API, asked first; nil when none is known.
  package let captiveAPI: URL?
  /// The deadline of each check.
  package let deadline: Duration

  /// Creates a probe.
  /// - Parameters:
  ///   - transport: gives the base transport, at the first check.
  ///   - url: the probe URL.
  ///   - captiveAPI: the RFC 8908 API's URL, when known.
  ///   - deadline: each check's deadline.
  package init(
    transport: @escaping @Sendable () -> any Transport, url: URL, captiveAPI: URL? = nil,
    deadline: Duration = .seconds(5)
  ) {
    self.transport = transport
    self.url = url
    self.captiveAPI = captiveAPI
    self.deadline = deadline
  }

  /// Checks the path once: the captive-portal API when known (its answer decides when it
  /// gives one), else the probe URL.
  /// - Parameter advertised: the API the network advertised (NetworkManager's DHCPv4 lease,
  ///   decision 2606), asked when the configuration names none.
  /// - Returns: what the answers show.
  package func check(advertised: URL? = nil) async -> PortalCheck {
    if let api = captiveAPI ?? advertised,
      let answer = await ask(api, accept: "application/captive+json")
    {
      let verdict = PortalCheck.captiveAPIAnswer(
        status: answer.status.code, contentType: answer.fields[.contentType],
        body: answer.body)
      if verdict != .unknown { return verdict }
    }
    guard let answer = await ask(url, accept: "application/json") else { return .unknown }
    return PortalCheck.probeAnswer(
      status: answer.status.code, body: answer.body, location: answer.fields[.location])
  }

  private func ask(_ target: URL, accept: String) async -> (
    status: HTTPResponse.Status, fields: HTTPFields, body: Data
  )? {
    guard
      let request = try? HTTPRequest(
        checking: target, method: .get, headerFields: [.accept: accept, .cacheControl: "no-cache"])
    else { return nil }
    do {
      let (response, body) = try await transport().send(
        request, options: TransportOptions(deadline: deadline))
      return (response.status, response.headerFields, body.bytes)
    } catch {
      return nil
    }
  }
}

extension PortalProbe {
  /// The captive-portal API a path's OS facts advertise, when Courier may ask it (an `https`
  /// URL, RFC 8908 §4).
  /// - Parameter path: the path.
  /// - Returns: the URL, or nil.
  package static func advertised(on path: NetworkPath) -> URL? {
    guard case .success(let url)? = path.sources.os.captivePortalAPI?.usable else { return nil }
    return url
  }
}
