import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Logging
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The resumable upload use case, tus 1.0.0 (decision 1301): compress once (the same rules as
/// `Uploader`), create the upload with one `Idempotency-Key` for its whole life, send the file
/// in chunks with `PATCH` (each with its SHA-256 when the server offers checksums), and after
/// any interruption ask the server (`HEAD`) where it stopped and send only the rest. The
/// upload's record (URL, key, file identity, confirmed offset) is saved in `store` so a new
/// process resumes too; a changed file starts over. Memory stays flat: chunks are file ranges
/// read while sending.
///
/// `transport` must make one attempt per call (no retry step): this type retries itself,
/// through `executor`, and each retry resumes with a `HEAD` instead of repeating a `PATCH`.
package struct TusUploader<C: Clock>: Sendable where C.Duration == Duration {
  /// The transport, one attempt per call (auth, middlewares and logging around an adapter).
  package let transport: any Transport
  /// The retry executor: its policy decides whether an interrupted upload is resumed.
  package let executor: RetryExecutor<C>
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Where upload records survive the process; nil to keep them in memory only.
  package let store: (any ResumableUploadStore)?
  /// Per-request options (the deadline of one request).
  package let options: TransportOptions
  /// The bytes of a run's first `PATCH` when no rate was confirmed before; the next ones last
  /// about a quarter of a second each at the rate the server's answers confirm
  /// (`UploadPieces`, decision 2704).
  package let chunkSize: Int64
  /// Where the compressed image is written.
  package let temporaryDirectory: URL
  /// The least change in bytes sent that is published as a new `uploading` state.
  package let progressGranularity: Int64
  /// Computes the chunks' checksums and, where a file's metadata cannot vouch for its bytes,
  /// their identity (decision 1303).
  package let hasher: any FileHasher
  /// The wall clock a file's change time is compared with (``ResumableUpload/FileIdentity/isRacy(checkedAt:)``).
  package let wallClock: any WallClock

  /// The default first `PATCH`: 1 MiB (`UploadPieces.defaultFirst`). A checksummed chunk cut
  /// short is sent again whole, so this bounds what an interruption before any rate is known
  /// costs.
  package static var defaultChunkSize: Int64 { UploadPieces.defaultFirst }

  /// Creates an tus.
  /// - Parameters:
  ///   - transport: one attempt per call.
  ///   - executor: the retry executor.
  ///   - compressor: the image compressor.
  ///   - store: where records survive the process; nil for none.
  ///   - options: per-request options.
  ///   - chunkSize: bytes per `PATCH` (at least 1).
  ///   - temporaryDirectory: where the compressed image goes.
  ///   - progressGranularity: the least progress change published.
  ///   - hasher: the SHA-256 of file ranges (the portable one by default).
  ///   - wallClock: the wall clock.
  package init(
    transport: any Transport, executor: RetryExecutor<C>, compressor: any ImageCompressor,
    store: (any ResumableUploadStore)? = nil, options: TransportOptions = TransportOptions(),
    chunkSize: Int64 = defaultChunkSize,
    temporaryDirectory: URL = FileManager.default.temporaryDirectory,
    progressGranularity: Int64 = 64 * 1024, hasher: any FileHasher = SwiftFileHasher(),
    wallClock: any WallClock = SystemWallClock()
  ) {
    self.hasher = hasher
    self.wallClock = wallClock
    self.transport = transport
    self.executor = executor
    self.compressor = compressor
    self.store = store
    self.options = options
    self.chunkSize = max(1, chunkSize)
    self.temporaryDirectory = temporaryDirectory
    self.progressGranularity = max(0, progressGranularity)
  }

  /// Starts an upload and publishes its states, like `Uploader.states(for:)`: the last
  /// element is `succeeded`, or the stream throws the `CourierError` that ended the upload.
  /// - Parameter request: what to upload; `target` is the tus endpoint (creation URL).
  /// - Returns: the states, in order.
  package func states(for request: UploadRequest) -> AsyncThrowingStream<UploadState, any Error> {
    UploadState.stream { try await self.perform(request, onState: $0) }
  }

  /// Runs a resumable upload in the caller's task.
  /// - Parameters:
  ///   - request: what to upload; `target` is the tus endpoint, `confirmation` `.record`
  ///     requires the server to name the stored record (`Courier-Photo-Id`).
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`; a resumed
  ///     upload's first `uploading` is at the offset the server held, never at 0.
  ///   - onResume: told `(offset, total)` when an attempt goes on from bytes the server
  ///     already held (after a `HEAD`), before that `uploading`.
  /// - Returns: the result; its response is the answer that proved completion.
  /// - Throws: `CourierError`: `fileUnavailable`, `invalidInput`, `invalidResponse` for an
  ///   answer that would risk a damaged file (an impossible offset), the classified refusal,
  ///   the last transient failure after the retries, `cancelled`.
  package func perform(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in }
  ) async throws -> UploadResult {
    let preparation = UploadPreparation(
      compressor: compressor, temporaryDirectory: temporaryDirectory)
    return try await preparation.run(request, onState: onState) { prepared, _ in
      let (fresh, key) = try ResumableUpload.made(
        for: prepared, request: request, store: store, hasher: hasher, wallClock: wallClock)
      return try await transfer.send(
        prepared, request: request, record: fresh, key: key, onState: onState,
        onResume: onResume)
    }
  }

  /// The protocol part, with this uploader's transport, retries, store and chunk size.
  var transfer: TusTransfer<C> {
    TusTransfer(
      transport: transport, executor: executor, store: store, options: options,
      chunkSize: chunkSize, progressGranularity: progressGranularity, hasher: hasher)
  }
}
