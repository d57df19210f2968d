#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A response as received, of any status.
public struct HTTPResponse: Sendable, Equatable {
  /// The status code.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The response's bytes, decompressed, as the server sent them (possibly empty).
  public var body: Data
  /// How many attempts the pipeline made to get this response (1 without retries).
  public var attempts: Int
  /// The pipeline's verdict on this response when it is a failure, set by the one step that
  /// classified it (the retry step) so that nothing classifies it again; nil for a success or
  /// a response no step has classified yet.
  public var failure: CourierError?

  /// Creates a response.
  /// - Parameters:
  ///   - status: the status code.
  ///   - headers: the header fields.
  ///   - body: the body.
  ///   - attempts: how many attempts were made.
  public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), attempts: Int = 1) {
    self.status = status
    self.headers = headers
    self.body = body
    self.attempts = attempts
  }

  /// Whether the status is 2xx or 304 Not Modified.
  public var isSuccess: Bool { (200..<300).contains(status) || status == 304 }
}
