import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The tus exchange of prepared bytes (decision 1301): `ResumableTransfer` with tus's
/// exchanges (`TusStrategy`). Shared by `TusUploader` and the replay of queued uploads.
struct TusTransfer<C: Clock>: Sendable where C.Duration == Duration {
  let transport: any Transport
  let executor: RetryExecutor<C>
  let store: (any ResumableUploadStore)?
  let options: TransportOptions
  /// The first `PATCH` of a run that knows no confirmed rate (decision 2704).
  let chunkSize: Int64
  let progressGranularity: Int64
  let hasher: any FileHasher

  /// Sends `prepared` to `request.target`, resuming the record saved under `key` when it
  /// describes the same bytes (`fresh.resumes`).
  func send(
    _ prepared: PreparedUpload, request: UploadRequest, record fresh: ResumableUpload,
    key: String, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void
  ) async throws -> UploadResult {
    let part = prepared.part
    let title = request.title ?? request.file.lastPathComponent
    var pairs: [(key: String, value: String)] = [
      ("title", title), ("filename", part.filename ?? request.file.lastPathComponent),
      ("filetype", part.contentType ?? "application/octet-stream"),
    ]
    for field in request.fields {
      if case .text(let value) = field.content { pairs.append((field.name, value)) }
    }
    let length = prepared.length
    let strategy = TusStrategy(
      request: request, file: prepared.url, length: length, metadata: Tus.metadata(pairs),
      hasher: hasher)
    let transfer = ResumableTransfer(
      transport: transport, executor: executor, store: store, options: options,
      progressGranularity: progressGranularity, firstPiece: chunkSize)
    let outcome = try await transfer.send(
      strategy, record: fresh, key: key, givenKey: request.idempotencyKey, length: length,
      onState: onState, onResume: onResume)
    let response = outcome.answer
    var result = UploadResult(
      response: response.0, responseBody: response.1, attempts: outcome.attempts,
      verdict: prepared.verdict, bodyLength: length, idempotencyKey: outcome.record.idempotencyKey)
    result.uploadURL = outcome.record.uploadURL.flatMap(URL.init(string:))
    result.recordID = response.0.headerFields[.courierPhotoID]
    result.resumedAt = outcome.resumedAt
    return result
  }
}
