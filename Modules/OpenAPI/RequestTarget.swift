import CourierDomain
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a request goes, in the two shapes the two worlds use: swift-openapi-runtime gives a
/// request whose path (with its query) is relative to a base URL and whose scheme and authority
/// are unset; Courier's transports take one request carrying all three.
enum RequestTarget {
  /// The request with its scheme, authority and path made from a base URL and its own path,
  /// the way swift-openapi-urlsession joins them: the base's path, without its query or
  /// trailing slashes, then the request's path and query (`http://h/api/` and `/articles?x=1`
  /// give `http://h/api/articles?x=1`). Method, header fields and the other pseudo-header
  /// fields are kept.
  /// - Parameters:
  ///   - request: a request whose path is relative to `baseURL`.
  ///   - baseURL: the server URL (the generated client's `serverURL`).
  /// - Returns: the absolute request.
  /// - Throws: `CourierError.invalidInput` when the base URL is not absolute (the runtime's
  ///   default `/`) or the joined URL is not one.
  static func join(_ request: HTTPRequest, to baseURL: URL) throws(CourierError) -> HTTPRequest {
    let base = try HTTPRequest(checking: baseURL, method: request.method)
    var prefix = Substring(base.path ?? "")
    if let query = prefix.firstIndex(of: "?") { prefix = prefix[..<query] }
    while prefix.last == "/" { prefix.removeLast() }
    let relative = request.path ?? "/"
    var joined = request
    joined.scheme = base.scheme
    joined.authority = base.authority
    joined.path = relative.first == "/" ? prefix + relative : prefix + "/" + relative
    guard joined.url != nil else {
      throw CourierError(
        .invalidInput,
        serverMessage: "“\(relative)” can't be joined to \(baseURL.absoluteString) as a URL.",
        context: request.summary)
    }
    return joined
  }

  /// The request split as swift-openapi-runtime's middlewares see one: the origin (scheme and
  /// authority) as the base URL, and the request with its path and query only. Joining the two
  /// again gives the same request.
  /// - Parameter request: an absolute request, as Courier's pipeline carries it.
  /// - Returns: the relative request and the base URL; nil when the request has no scheme or
  ///   authority to split off.
  static func split(_ request: HTTPRequest) -> (request: HTTPRequest, baseURL: URL)? {
    guard let scheme = request.scheme, let authority = request.authority,
      let origin = URL(string: "\(scheme)://\(authority)")
    else { return nil }
    var relative = request
    relative.scheme = nil
    relative.authority = nil
    if relative.path == nil { relative.path = "/" }
    return (relative, origin)
  }
}
