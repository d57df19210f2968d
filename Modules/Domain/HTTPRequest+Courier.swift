import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension HTTPRequest.Method {
  /// Whether RFC 9110 defines the method as idempotent: sending it twice has the effect of once.
  package var isIdempotent: Bool {
    switch rawValue {
    case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
    default: return false
    }
  }
}

extension HTTPRequest {
  /// A request to an absolute URL, refused as `invalidInput` where swift-http-types would stop
  /// the process (`init(method:url:headerFields:)` traps on a URL without a scheme): for URLs
  /// that come from a caller, a file or a server.
  /// - Parameters:
  ///   - method: the method.
  ///   - url: the URL; it needs a scheme.
  ///   - headerFields: the header fields.
  /// - Throws: `CourierError.invalidInput` naming the URL.
  package init(
    checking url: URL, method: Method, headerFields: HTTPFields = [:]
  ) throws(CourierError) {
    guard url.scheme != nil, let parts = URLComponents(url: url, resolvingAgainstBaseURL: true),
      parts.scheme != nil, parts.string != nil
    else {
      throw CourierError(
        .invalidInput, serverMessage: "“\(url.absoluteString)” is not an absolute URL.")
    }
    self.init(method: method, url: url, headerFields: headerFields)
  }

  /// Whether sending this request twice is harmless: an idempotent method, or an
  /// `Idempotency-Key` the server deduplicates on.
  package var isSafeToRepeat: Bool {
    method.isIdempotent || headerFields[.idempotencyKey] != nil
  }

  /// A short description for logs and messages: method and path, never the query, the headers
  /// or the body (`PUT /articles/42`).
  package var summary: String {
    var target = Substring(path ?? "/")
    if let query = target.firstIndex(of: "?") { target = target[..<query] }
    return "\(method) \(target.isEmpty ? "/" : target)"
  }
}
