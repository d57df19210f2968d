import CourierDomain
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The redirect loop both HTTP adapters share: send, and while `RedirectRule` says so, send
/// again to the new place, all within the caller's one deadline (decision 0503).
///
/// Adapters run it themselves rather than letting their library follow: libcurl can only
/// follow every redirect or none, and URLSession on Linux drops the body of a 307/308.
package enum RedirectFollowing {
  /// One hop's request.
  package struct Hop: Sendable {
    /// The request: method, URL and fields for this hop.
    package var request: HTTPRequest
    /// Whether the original body (in memory, file or segments) is sent with this hop.
    package var sendsBody: Bool
    /// What is left of the caller's deadline.
    package var deadline: Duration?
  }

  /// Sends a request and follows its same-origin redirects.
  /// - Parameters:
  ///   - request: the first request.
  ///   - deadline: the caller's overall deadline, shared by every hop.
  ///   - send: sends one hop and returns its response.
  /// - Returns: the first response that is not followed, with its body.
  /// - Throws: what `send` throws; `timedOut` when the deadline passes between hops.
  package static func run(
    _ request: HTTPRequest, deadline: Duration?,
    send: (Hop) async throws -> (HTTPResponse, ResponseBody)
  ) async throws -> (HTTPResponse, ResponseBody) {
    let start = ContinuousClock.now
    var hop = Hop(request: request, sendsBody: true, deadline: deadline)
    var hops = 0
    while true {
      if let deadline {
        let left = deadline - start.duration(to: .now)
        guard left > .zero else {
          throw CourierError(
            .timedOut, mayHaveReachedServer: true,
            underlying: "overall deadline of \(deadline) passed", context: request.summary)
        }
        hop.deadline = left
      }
      let answer = try await send(hop)
      let (response, _) = answer
      guard let url = hop.request.url,
        let step = RedirectRule.next(
          method: hop.request.method, url: url, status: response.status.code,
          location: response.headerFields[.location], hops: hops)
      else { return answer }
      hops += 1
      hop.request.method = step.method
      hop.request.url = step.url
      if !step.keepsBody {
        hop.sendsBody = false
        for name in [HTTPField.Name.contentType, .contentEncoding, .contentLength] {
          hop.request.headerFields[name] = nil
        }
      }
    }
  }
}
