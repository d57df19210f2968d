import CourierDomain
import CourierPorts
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a finished upload produced.
public struct UploadResult: Sendable, Equatable {
  /// The server's response (2xx): the one that proved the upload.
  public var response: HTTPResponse
  /// Its body (the stored record, for the reference backend's `/photos`; empty for a tus
  /// upload's last answer).
  public var responseBody: ResponseBody
  /// How many attempts the upload took (1 without retries; a resumable upload's attempts each
  /// go on from what the server held).
  package var attempts: Int
  /// Which file was sent and why.
  package var verdict: CompressionDecision.Verdict
  /// The body's length in bytes.
  package var bodyLength: Int64
  /// The `Idempotency-Key` every attempt carried.
  package var idempotencyKey: String
  /// A resumable (tus) upload's URL at the server; nil for a multipart upload.
  package var uploadURL: URL?
  /// The record the server made of a resumable upload (`Courier-Photo-Id`), when it names one.
  package var recordID: String?
  /// Where a resumable upload started in its last run: the bytes the server already held
  /// (0 for a fresh upload); nil for a multipart upload.
  package var resumedAt: Int64?
  /// The IETF draft's interop version a draft upload was sent at (after any negotiation);
  /// nil for tus and plain uploads.
  package var interop: IETFInterop?

  /// Creates a result.
  /// - Parameters:
  ///   - response: the response.
  ///   - responseBody: its body.
  ///   - attempts: the attempts made.
  ///   - verdict: the compression verdict.
  ///   - bodyLength: the body's length.
  ///   - idempotencyKey: the key.
  package init(
    response: HTTPResponse, responseBody: ResponseBody = ResponseBody(), attempts: Int = 1,
    verdict: CompressionDecision.Verdict, bodyLength: Int64, idempotencyKey: String
  ) {
    self.response = response
    self.responseBody = responseBody
    self.attempts = attempts
    self.verdict = verdict
    self.bodyLength = bodyLength
    self.idempotencyKey = idempotencyKey
  }
}
