import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The form upload of `courier upload` that a server speaking the IETF draft makes resumable
/// (decision 2702): prepared as `Uploader` prepares it (compressed once, the same form), sent
/// by `DraftUpload`. The upload's record (its address once a `104` gave one, its key, the
/// file's identity) is kept in `store` until the delivery is proven, so a run killed after the
/// `104` resumes in the next one; the form's boundary comes from the record's name (the target
/// and the file), so the resumed bytes are the same bytes.
package struct DraftUploader<C: Clock>: Sendable where C.Duration == Duration {
  /// The transport, one attempt per call.
  package let transport: any Transport
  /// The retries: each one after the `104` resumes.
  package let executor: RetryExecutor<C>
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Where upload records survive the process; nil to keep them in memory only.
  package let store: (any ResumableUploadStore)?
  /// Per-request options.
  package let options: TransportOptions
  /// Where the compressed image is written.
  package let temporaryDirectory: URL
  /// The SHA-256 of bytes whose identity cannot vouch for them (decision 1303).
  package let hasher: any FileHasher
  /// The wall clock a file's change time is compared with.
  package let wallClock: any WallClock
  /// The IETF draft's interop version configured (`ietf_interop_version`, `--interop`): the
  /// only one tried. nil: 8 first, and the highest both speak when the server refuses it
  /// (decision 2708).
  package var interop: IETFInterop?

  /// Creates an uploader.
  /// - Parameters:
  ///   - transport: one attempt per call.
  ///   - executor: the retries.
  ///   - compressor: the image compressor.
  ///   - store: where records survive the process; nil for none.
  ///   - options: per-request options.
  ///   - temporaryDirectory: where the compressed image goes.
  ///   - hasher: the SHA-256 of file ranges (the portable one by default).
  ///   - wallClock: the wall clock.
  package init(
    transport: any Transport, executor: RetryExecutor<C>, compressor: any ImageCompressor,
    store: (any ResumableUploadStore)?, options: TransportOptions = TransportOptions(),
    temporaryDirectory: URL = FileManager.default.temporaryDirectory,
    hasher: any FileHasher = SwiftFileHasher(), wallClock: any WallClock = SystemWallClock()
  ) {
    self.hasher = hasher
    self.wallClock = wallClock
    self.transport = transport
    self.executor = executor
    self.compressor = compressor
    self.store = store
    self.options = options
    self.temporaryDirectory = temporaryDirectory
  }

  /// Runs the upload in the caller's task.
  /// - Parameters:
  ///   - request: what to upload; `target` is the form's target (`/photos`).
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`.
  ///   - onResume: told `(offset, total)` when an attempt goes on from bytes the server held.
  /// - Returns: the result; `uploadURL` is set when the server offered resumption.
  /// - Throws: `CourierError`, as `Uploader.perform` throws.
  package func perform(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in }
  ) async throws -> UploadResult {
    let preparation = UploadPreparation(
      compressor: compressor, temporaryDirectory: temporaryDirectory)
    return try await preparation.run(request, onState: onState) { prepared, _ in
      let (record, key) = try ResumableUpload.made(
        for: prepared, request: request, store: store, hasher: hasher, wallClock: wallClock)
      let title = request.title ?? request.file.lastPathComponent
      let layout = try MultipartForm([.text("title", title)] + request.fields + [prepared.part])
        .layout(boundary: try MultipartBoundary("courier-\(key.prefix(40))"))
      let upload = DraftUpload(
        transport: transport, executor: executor, store: store, options: options,
        progressGranularity: 64 * 1024, interop: interop ?? .current, pinned: interop != nil)
      let answer = try await upload.send(
        layout, to: request.target, record: record, key: key,
        confirmation: request.confirmation, fileSize: prepared.length, onState: onState,
        onResume: onResume)
      var result = UploadResult(
        response: answer.response, responseBody: answer.body, attempts: answer.attempts,
        verdict: prepared.verdict, bodyLength: answer.bodyLength,
        idempotencyKey: answer.idempotencyKey)
      result.uploadURL = answer.uploadURL
      result.recordID = answer.response.headerFields[.courierPhotoID]
      result.resumedAt = answer.resumedAt
      result.interop = answer.interop
      return result
    }
  }
}
