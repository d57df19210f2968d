import CourierDomain
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a request goes, in the two shapes the two worlds use: swift-openapi-runtime gives a
/// request whose path (with its query) is relative to a base URL and whose scheme and authority
/// are unset; Courier's transports take one request carrying all three.
enum RequestTarget {
  /// A server URL taken apart: what every request joined to it takes from it.
  struct Base: Sendable {
    /// The server URL itself.
    let url: URL
    let scheme: String?
    let authority: String?
    /// Its path without its query or trailing slashes ("" for none).
    let prefix: Substring

    /// Takes a server URL apart (URLComponents and swift-http-types' URL parsing, the
    /// costliest part of a join: ``BaseCache`` keeps the last one).
    /// - Parameter url: the server URL (the generated client's `serverURL`).
    /// - Throws: `CourierError.invalidInput` when it is not absolute (the runtime's default `/`).
    init(_ url: URL) throws(CourierError) {
      let base = try HTTPRequest(checking: url, method: .get)
      var prefix = Substring(base.path ?? "")
      if let query = prefix.firstIndex(of: "?") { prefix = prefix[..<query] }
      while prefix.last == "/" { prefix.removeLast() }
      self.url = url
      self.scheme = base.scheme
      self.authority = base.authority
      self.prefix = prefix
    }
  }

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
    try join(request, to: Base(baseURL))
  }

  /// The request joined to a server URL already taken apart, as the join with a URL does.
  /// - Parameters:
  ///   - request: a request whose path is relative to the server URL.
  ///   - base: the server URL, taken apart.
  /// - Returns: the absolute request.
  /// - Throws: `CourierError.invalidInput` when the joined URL is not one.
  static func join(_ request: HTTPRequest, to base: Base) throws(CourierError) -> HTTPRequest {
    let relative = request.path ?? "/"
    var joined = request
    joined.scheme = base.scheme
    joined.authority = base.authority
    joined.path = relative.first == "/" ? base.prefix + relative : base.prefix + "/" + relative
    guard joined.url != nil else {
      throw CourierError(
        .invalidInput,
        serverMessage: "“\(relative)” can't be joined to \(base.url.absoluteString) as a URL.",
        context: request.summary)
    }
    return joined
  }

  /// The last server URL a transport joined a request to, taken apart: a generated client
  /// sends every call to the same `serverURL`, so it is taken apart once, not per call (per
  /// call it was a third of CourierClientTransport's own CPU: Docs/benchmarks/openapi.md).
  final class BaseCache: Sendable {
    private let last = Mutex<Base?>(nil)

    /// The server URL taken apart: the last one when `url` is the same URL.
    /// - Parameter url: the server URL.
    /// - Returns: its parts.
    /// - Throws: `CourierError.invalidInput` when it is not absolute.
    func base(of url: URL) throws(CourierError) -> Base {
      if let base = last.withLock({ $0 }), base.url == url { return base }
      let base = try Base(url)
      last.withLock { $0 = base }
      return base
    }
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
