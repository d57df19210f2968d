import CourierCore
import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Photo uploads now, with progress: an image is downsampled and compressed, then streamed from
/// disk as `multipart/form-data` (``send(_:title:fields:compress:compression:)``) or resumably
/// with tus 1.0.0 (``sendResumable(_:title:to:compress:compression:)``), retried as the
/// configuration says. Reach it as ``CourierSession/uploads``; an upload that must survive the
/// network's absence is queued with ``CourierSession/queuedUploads`` instead.
///
/// ```swift
/// for try await state in courier.uploads.send(photo, title: "Beach") { print(state) }
/// ```
public struct Uploads: Sendable {
  private let environment: CourierEnvironment

  init(environment: CourierEnvironment) { self.environment = environment }

  /// Uploads a file to the server's photos endpoint: an image is downsampled and compressed
  /// (JPEG 0.7, orientation applied, location data removed), anything else is sent as it is,
  /// streamed from disk as `multipart/form-data`.
  ///
  /// Iterate the stream for progress; its last element is `.succeeded`, or the stream throws
  /// the `CourierError` that ended the upload. Stopping the iteration cancels the upload and
  /// removes its temporary files.
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the photo's title field.
  ///   - fields: other form fields, in order.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the upload's states.
  public func send(
    _ file: URL, title: String? = nil, fields: [(name: String, value: String)] = [],
    compress: Bool = true, compression: CompressionOptions = CompressionOptions()
  ) -> AsyncThrowingStream<UploadState, any Error> {
    let request: UploadRequest
    do {
      request = UploadRequest(
        file: file, target: try environment.client.url("/photos"), title: title,
        fields: fields.map { MultipartPart.text($0.name, $0.value) }, compress: compress,
        compression: compression, confirmation: .record)
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: CourierError.wrapping(error)) }
    }
    return send(request)
  }

  /// Uploads as `request` says (another target, a fixed Idempotency-Key, what the reply must
  /// show), with the same stream as ``send(_:title:fields:compress:compression:)``.
  /// - Parameter request: the upload.
  /// - Returns: the upload's states; the last is `.succeeded`, or the stream throws.
  public func send(_ request: UploadRequest) -> AsyncThrowingStream<UploadState, any Error> {
    uploader().states(for: request)
  }

  /// Uploads in the caller's task: when it returns or throws, even on cancellation, the
  /// upload's temporary files are gone.
  /// - Parameters:
  ///   - request: the upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`, from any
  ///     thread.
  /// - Returns: the result: the server's reply and what was sent.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, the classified failure with
  ///   its attempts, `cancelled`).
  public func send(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> UploadResult {
    try await uploader().perform(request, onState: onState)
  }

  private func uploader() -> Uploader {
    Uploader(
      transport: environment.client.transport, compressor: environment.compressor,
      options: environment.client.options)
  }

  /// Uploads a file resumably with tus 1.0.0 (decision 1301), to the server's `/uploads` or
  /// to `endpoint`: compressed once like ``send(_:title:fields:compress:compression:)``, then
  /// sent in checksummed chunks. An interrupted transfer resumes where the server stopped
  /// (a `HEAD`, then only the rest), also in a new process: the upload's record is kept in
  /// the data folder's `uploads/` until the server confirms the last byte.
  ///
  /// A resumed upload's first `.uploading` is at the bytes the server already held (a bar
  /// does not restart from 0; the result's `resumedAt` says where); its last element is
  /// `.succeeded` (the result names the upload URL and the stored photo), or it throws the
  /// `CourierError` that ended the upload.
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the `title` metadata (the file's name when nil).
  ///   - endpoint: another tus server's creation URL; nil for `{base}/uploads`, whose answer
  ///     must name the stored photo (`Courier-Photo-Id`) to count as delivered.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the upload's states.
  public func sendResumable(
    _ file: URL, title: String? = nil, to endpoint: URL? = nil, compress: Bool = true,
    compression: CompressionOptions = CompressionOptions()
  ) -> AsyncThrowingStream<UploadState, any Error> {
    let request: UploadRequest
    do {
      request = UploadRequest(
        file: file, target: try endpoint ?? environment.client.url("/uploads"), title: title,
        compress: compress, compression: compression,
        confirmation: endpoint == nil ? .record : .status)
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: CourierError.wrapping(error)) }
    }
    return resumableUploader().states(for: request)
  }

  /// Uploads resumably in the caller's task, as `request` says (`target` is the tus creation
  /// URL; `confirmation` `.record` requires `Courier-Photo-Id`); when it returns or throws the
  /// temporary files are gone, and the resume record is kept unless the upload completed.
  /// - Parameters:
  ///   - request: the upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`, from any
  ///     thread; a resumed upload's first `uploading` is at the offset the server held.
  ///   - onResume: told `(offset, total)` when the upload goes on from bytes the server
  ///     already held, before that `uploading`.
  /// - Returns: the result: the answer that proved completion, the upload URL, the photo id.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, `invalidResponse` for an
  ///   answer that would risk a damaged file, the classified failure, `cancelled`).
  public func sendResumable(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in }
  ) async throws -> UploadResult {
    try await resumableUploader().perform(request, onState: onState, onResume: onResume)
  }

  /// Uploads `request` as a form, as ``send(_:onState:)`` does, offering the server to make it
  /// resumable with the IETF draft (decision 2702): a server that answers `104` with the
  /// upload's address gets the rest after an interruption (a `HEAD`, then only the missing
  /// bytes), in this run or, from the record kept in the data folder's `uploads/`, the next.
  /// - Parameters:
  ///   - request: the upload; `target` is the form's target.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`.
  ///   - onResume: told `(offset, total)` when the upload goes on from bytes the server held.
  ///   - interop: the draft's interop version to speak, the only one tried; nil for the
  ///     configuration's (`ietf_interop_version`), else 8, negotiated down when refused
  ///     (decision 2708).
  /// - Returns: the result; `uploadURL` is set when the server offered resumption, `interop`
  ///   names the version spoken.
  /// - Throws: `CourierError`, as ``send(_:onState:)`` throws.
  package func sendOfferingResumption(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in },
    interop: IETFInterop? = nil
  ) async throws -> UploadResult {
    let config = environment.config
    var uploader = DraftUploader(
      transport: environment.singleAttemptTransport,
      executor: RetryExecutor(
        policy: config.retry, clock: ContinuousClock(), metrics: environment.metrics),
      compressor: environment.compressor,
      store: FileResumableUploadStore(
        directory: config.dataDirectory.appendingPathComponent("uploads")),
      options: environment.client.options)
    uploader.interop = interop ?? config.ietfInteropVersion
    return try await uploader.perform(request, onState: onState, onResume: onResume)
  }

  /// The resumable protocols a server may offer for an upload.
  package enum ResumableProtocol: Sendable, Equatable {
    /// The IETF draft at the form's target.
    case draft
    /// tus 1.0.0 at its creation URL.
    case tus
    /// Neither: a plain form upload.
    case none
  }

  /// Asks the server which resumable protocol it offers (decision 2702): `OPTIONS` on the
  /// form's target, whose `Accept-Patch: application/partial-upload` says the draft, then tus's
  /// own `OPTIONS`. A failed request counts as not offered.
  /// - Parameters:
  ///   - form: the form's target (`/photos`).
  ///   - tus: tus's creation URL (`/uploads`).
  ///   - draft: false when the form's target would refuse the file (not an image): then
  ///     only tus is asked.
  /// - Returns: the protocol to use, the draft first.
  package func offeredResumption(form: URL, tus: URL, draft: Bool = true) async
    -> ResumableProtocol
  {
    let transport = environment.singleAttemptTransport
    let options = environment.client.options
    if draft, let request = try? HTTPRequest(checking: form, method: .options),
      let (answer, _) = try? await transport.send(request, body: nil, options: options),
      IETFUpload.offers(answer)
    {
      return .draft
    }
    if let request = try? HTTPRequest(checking: tus, method: .options),
      let (answer, _) = try? await transport.send(request, body: nil, options: options),
      Tus.speaks(answer)
    {
      return .tus
    }
    return .none
  }

  private func resumableUploader() -> TusUploader<ContinuousClock> {
    let config = environment.config
    return TusUploader(
      transport: environment.singleAttemptTransport,
      executor: RetryExecutor(
        policy: config.retry, clock: ContinuousClock(), metrics: environment.metrics),
      compressor: environment.compressor,
      store: FileResumableUploadStore(
        directory: config.dataDirectory.appendingPathComponent("uploads")),
      // The executor logs its decisions to the client's logger, as the pipeline's does.
      options: environment.client.options, hasher: environment.fileHasher)
  }
}
