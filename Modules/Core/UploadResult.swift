import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// What a finished upload produced.
public struct UploadResult: Sendable, Equatable {
  /// The server's response (2xx).
  public var response: HTTPResponse
  /// Which file was sent and why.
  public var verdict: CompressionDecision.Verdict
  /// The body's length in bytes.
  public var bodyLength: Int64
  /// The `Idempotency-Key` every attempt carried.
  public var idempotencyKey: String

  /// Creates a result.
  /// - Parameters:
  ///   - response: the response.
  ///   - verdict: the compression verdict.
  ///   - bodyLength: the body's length.
  ///   - idempotencyKey: the key.
  public init(
    response: HTTPResponse, verdict: CompressionDecision.Verdict, bodyLength: Int64,
    idempotencyKey: String
  ) {
    self.response = response
    self.verdict = verdict
    self.bodyLength = bodyLength
    self.idempotencyKey = idempotencyKey
  }
}
