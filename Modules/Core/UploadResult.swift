import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
  /// A resumable (tus) upload's URL at the server; nil for a multipart upload.
  public var uploadURL: URL?
  /// The record the server made of a resumable upload (`Courier-Photo-Id`), when it names one.
  public var recordID: String?
  /// Where a resumable upload started in its last run: the bytes the server already held
  /// (0 for a fresh upload); nil for a multipart upload.
  public var resumedAt: Int64?

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
