import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes

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

/// Sends the outbox entries of queued uploads (`QueuedUpload.collection`, decision 1302): the
/// bytes kept in the data folder go with tus 1.0.0 when the upload was queued so, or when its
/// endpoint answers `OPTIONS` as a tus server (an interrupted transfer resumes where the
/// server stopped, also in a new process), else as one `multipart/form-data` POST with the
/// boundary chosen when it was queued. Every attempt of the upload's life carries the entry's
/// `Idempotency-Key`.
///
/// `.delivered` only on the server's proof (decision 0414): the tus completion (`Upload-Offset`
/// equal to the length, and `Courier-Photo-Id` when the queued upload asks for the stored
/// record), or the multipart reply's stored record. The proof is then written in the data
/// folder and the bytes removed, so a crash before the entry is completed sends nothing
/// again. A local problem no retry can fix (the kept bytes are gone) is a refusal, so the
/// entry is quarantined instead of stopping the outbox (`QueuedUpload.replayError`).
///
/// Its requests log to `options.logger` with the entry's `courier.operation.id` and
/// `courier.collection` (decision 2203); the replayer records a proven delivery's lag.
package struct QueuedUploadSender<C: Clock>: ReplaySender where C.Duration == Duration {
  /// The composed pipeline, with its retry step: multipart uploads.
  package let transport: any Transport
  /// The pipeline without its retry step (`CourierEnvironment.singleAttemptTransport`): tus,
  /// which retries through `executor` and resumes with a `HEAD` instead of repeating a request.
  package let singleAttemptTransport: any Transport
  /// The tus transfer's retries.
  package let executor: RetryExecutor<C>
  /// Where the bytes, the resume records and the proofs are kept.
  package let store: any QueuedUploadStore
  /// Per-request options (the deadline of one request).
  package let options: TransportOptions
  /// The first tus `PATCH` or draft append of a run that knows no confirmed rate; the next
  /// ones are sized by the rate the server confirms (`UploadPieces`, decision 2704).
  package let chunkSize: Int64
  /// Where a multipart body file goes when one is needed.
  package let temporaryDirectory: URL
  /// The SHA-256 of the tus chunks, when the server offers checksums.
  package let hasher: any FileHasher
  /// The IETF draft's interop version configured (`ietf_interop_version`): the only one an
  /// `auto` entry's creation tries. nil: 8 first, negotiated down once when refused (decision
  /// 2708). A started upload always speaks the version of its creation, kept in its record.
  package var interop: IETFInterop?

  /// Creates a sender.
  /// - Parameters:
  ///   - transport: the composed pipeline (multipart).
  ///   - singleAttemptTransport: the pipeline without its retry step (tus).
  ///   - executor: the tus transfer's retries.
  ///   - store: the queued uploads' files.
  ///   - options: per-request options.
  ///   - chunkSize: the first piece when no rate is known.
  ///   - temporaryDirectory: where a multipart body file goes.
  ///   - hasher: the SHA-256 of file ranges (the portable one by default).
  package init(
    transport: any Transport, singleAttemptTransport: any Transport, executor: RetryExecutor<C>,
    store: any QueuedUploadStore, options: TransportOptions = TransportOptions(),
    chunkSize: Int64 = TusUploader<C>.defaultChunkSize,
    temporaryDirectory: URL = FileManager.default.temporaryDirectory,
    hasher: any FileHasher = SwiftFileHasher()
  ) {
    self.hasher = hasher
    self.transport = transport
    self.singleAttemptTransport = singleAttemptTransport
    self.executor = executor
    self.store = store
    self.options = options
    self.chunkSize = max(1, chunkSize)
    self.temporaryDirectory = temporaryDirectory
  }

  /// Sends one attempt of a queued upload (see the type's summary).
  /// - Parameters:
  ///   - entry: the entry, of the `uploads` collection.
  ///   - progress: told the bytes sent so far, from the offset the server confirmed (a resumed
  ///     upload starts there, never at 0).
  /// - Returns: `.delivered(nil)` on the server's proof, `.failed` with the classified error.
  package func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?) async
    -> ReplayAnswer
  {
    let id = entry.key.id
    // Proven before a crash kept the entry from completing: nothing to send again.
    if store.isDelivered(id) { return .delivered(nil) }
    let options = self.options.forEntry(entry)
    do {
      let upload = try QueuedUpload(payload: entry.operation.payload)
      _ = try await transfer(
        id, upload, key: ReplayRequest.idempotencyKey(for: entry.operation), options: options,
        progress: progress)
      // Best effort: should the proof not be written, a replay sends again under the same
      // key, and the server answers with what it stored.
      try? store.markDelivered(id)
      return .delivered(nil)
    } catch {
      var failure = CourierError.wrapping(error, context: "queued upload \(id)")
      if Task.isCancelled { failure.kind = .cancelled }
      return .failed(QueuedUpload.replayError(failure))
    }
  }

  /// Sends the kept bytes of `id` once, as `upload` describes, under `key`: tus or multipart
  /// (see the type's summary), without writing the proof.
  /// - Parameters:
  ///   - id: the upload's id (the name of its bytes and its resume record).
  ///   - upload: what to send where.
  ///   - key: the `Idempotency-Key` of the upload's life.
  ///   - options: the request options.
  ///   - progress: told the bytes sent so far.
  /// - Returns: the server's reference to what it stored: the id its answer names (the tus
  ///   completion's `Courier-Photo-Id`, the multipart reply's `id`), else the tus upload's URL;
  ///   nil when the answer names neither.
  /// - Throws: the classified failure.
  package func transfer(
    _ id: String, _ upload: QueuedUpload, key: String, options: TransportOptions,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> String? {
    let body = try keptBytes(id, upload)
    let onState: @Sendable (UploadState) -> Void = { state in
      if let sent = state.progress { progress?(sent) }
    }
    let started = started(id, upload)
    var route = upload.route(started: started == .tus, tusOffered: nil)
    if case .probe = route, let form = upload.formTarget,
      started == .draft || upload.contentType.hasPrefix("image/")
    {
      // The draft first, where the form's target offers it (decision 2703), then tus. A file
      // that is not an image asks tus first (decision 2709): the draft sends the target's
      // form, and a photos target takes images only.
      let offered =
        started == .draft
        ? true : await draftOffered(try Self.url(form), options: options)
      if offered { route = .multipart(form) }
    }
    if case .probe(let endpoint) = route {
      let (answer, _) = try await singleAttemptTransport.send(
        try HTTPRequest(checking: try Self.url(endpoint), method: .options), body: nil,
        options: options)
      route = upload.route(started: false, tusOffered: Tus.speaks(answer))
    }
    let part = MultipartPart.file(
      "file", filename: upload.filename, contentType: upload.contentType, url: body,
      size: upload.length)
    let fields = upload.fields.map { MultipartPart.text($0.name, $0.value) }
    switch route {
    case .tus(let endpoint), .probe(let endpoint):
      var request = UploadRequest(
        file: body, target: try Self.url(endpoint), title: upload.title, fields: fields,
        compress: false, idempotencyKey: key, confirmation: upload.tusConfirmation)
      request.bytesAfterCreation = upload.bytesAfterCreation
      // The bytes are the upload's own copy and never change: the entry is their identity.
      let fresh = ResumableUpload(
        endpoint: endpoint, file: body.path, fileSize: upload.length, fileModified: 0,
        sha256: "", length: upload.length, idempotencyKey: key)
      let tus = TusTransfer(
        transport: singleAttemptTransport, executor: executor, store: store.resumeRecords,
        options: options, chunkSize: chunkSize, progressGranularity: 64 * 1024, hasher: hasher)
      let result = try await tus.send(
        PreparedUpload(original: part, part: part, verdict: upload.verdict), request: request,
        record: fresh, key: id, onState: onState, onResume: { _, _ in })
      return result.recordID ?? result.uploadURL?.absoluteString
    case .multipart(let target) where upload.transfer == .auto:
      // The server's 104 may make it resumable (decision 2703).
      return try await sendDraft(
        id, upload, parts: [.text("title", upload.title)] + fields + [part],
        to: try Self.url(target), key: key, options: options, onState: onState)
    case .multipart(let target):
      let form = FormUpload(
        transport: transport, options: options, temporaryDirectory: temporaryDirectory,
        allowSegments: true, progressGranularity: 64 * 1024)
      let temporary = TemporaryFiles()
      defer { temporary.removeAll() }
      let answer = try await form.send(
        [.text("title", upload.title)] + fields + [part],
        boundary: try MultipartBoundary(upload.boundary), to: try Self.url(target),
        idempotencyKey: key, confirmation: upload.formConfirmation, fileSize: upload.length,
        temporary: temporary, onState: onState)
      return (try? JSONValue(parsing: answer.body.bytes))?["id"]?.stringValue
    }
  }

  /// The kept bytes of `id`, checked to be there and of the queued length.
  private func keptBytes(_ id: String, _ upload: QueuedUpload) throws -> URL {
    let body = store.body(id)
    var info = stat()
    let size = stat(body.path, &info) == 0 ? Int64(info.st_size) : nil
    guard RegularFile.problem(atPath: body.path) == nil, size == upload.length else {
      throw CourierError(
        .fileUnavailable, code: "upload_bytes_missing",
        serverMessage: "The bytes of the queued upload \(upload.filename) are missing or "
          + "damaged in the data folder; it can't be sent. Discard it and queue the file again.",
        context: body.path)
    }
    return body
  }

  private static func url(_ text: String) throws -> URL {
    guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
      throw CourierError(
        .invalidInput, code: "upload_target_invalid",
        serverMessage: "The queued upload's target “\(text)” is not a URL.")
    }
    return url
  }
}
