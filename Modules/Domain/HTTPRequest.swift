#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A request as the project speaks of it, independent of any HTTP library.
public struct HTTPRequest: Sendable, Equatable {
  /// What the request does to the resource (`GET`, `POST`, …).
  public var method: HTTPMethod
  /// The absolute URL.
  public var url: URL
  /// The header fields.
  public var headers: HTTPHeaders

  /// Creates a request. Its body, if any, is given beside it when it is sent
  /// (`Transport.send(_:body:options:)`).
  /// - Parameters:
  ///   - method: the method.
  ///   - url: the absolute URL.
  ///   - headers: the header fields.
  public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = [:]) {
    self.method = method
    self.url = url
    self.headers = headers
  }

  /// Whether sending this request twice is harmless: an idempotent method, or an
  /// `Idempotency-Key` the server deduplicates on.
  public var isSafeToRepeat: Bool {
    method.isIdempotent || headers["Idempotency-Key"] != nil
  }

  /// A short description for logs and messages: method and path, never headers or body.
  public var summary: String { "\(method) \(url.path.isEmpty ? "/" : url.path)" }
}
