import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Queues uploads in the outbox (decision 1302): the bytes to send are prepared once with the
/// rules of every upload (an image compressed, or the original and why), kept in the data
/// folder, and an outbox entry of `QueuedUpload.collection` describing them is committed, in
/// that order under the store's crash discipline (`QueuedUploadStore.keep`): a process killed
/// at any point leaves both or neither. No request is made: the replay sends it
/// (`QueuedUploadSender`), in outbox order with the other writes.
package struct UploadQueue: Sendable {
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Where the bytes wait.
  package let store: any QueuedUploadStore
  /// The outbox the entry goes to.
  package let outbox: any LocalStore
  /// Where the compressed image is written before it is kept.
  package let temporaryDirectory: URL
  /// The wall clock (the entry's `enqueuedAt`).
  package let now: @Sendable () -> Date

  /// Creates a queue.
  /// - Parameters:
  ///   - compressor: the image compressor.
  ///   - store: where the bytes wait.
  ///   - outbox: the outbox.
  ///   - temporaryDirectory: where the compressed image is written first.
  ///   - now: the wall clock.
  package init(
    compressor: any ImageCompressor, store: any QueuedUploadStore, outbox: any LocalStore,
    temporaryDirectory: URL = FileManager.default.temporaryDirectory,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.compressor = compressor
    self.store = store
    self.outbox = outbox
    self.temporaryDirectory = temporaryDirectory
    self.now = now
  }

  /// Prepares and queues an upload; returns once the entry and its bytes are durable.
  /// - Parameters:
  ///   - request: the file, title, text fields and compression; `target` and `confirmation`
  ///     are those of the multipart POST (of the tus creation for `.tus` when `tusEndpoint`
  ///     is nil); `idempotencyKey`, when a UUID, becomes the entry's operation id.
  ///   - transfer: the protocol: tus, multipart, or tus when the endpoint speaks it.
  ///   - tusEndpoint: the tus creation URL, for `.tus` and `.auto`.
  ///   - tusConfirmation: what the tus completion must show.
  ///   - allowsExpensive: whether it may go over an expensive path although the path policy
  ///     holds large uploads back there (decision 2610).
  ///   - interop: the IETF draft's interop version its creation speaks (`--interop`), kept in
  ///     the entry; nil for the configuration's when it is sent.
  ///   - onState: told `compressing` and `prepared`.
  /// - Returns: the outbox entry, pending; its `key.id` names the upload.
  /// - Throws: `CourierError`: `fileUnavailable`, `invalidInput` (an original that must not be
  ///   sent, a field or name that cannot be sent), `localStore` when the bytes or the entry
  ///   cannot be written (nothing is left then), `cancelled`.
  package func enqueue(
    _ request: UploadRequest, transfer: QueuedUpload.Transfer, tusEndpoint: URL? = nil,
    tusConfirmation: DeliveryProof.UploadConfirmation = .status, allowsExpensive: Bool = false,
    interop: IETFInterop? = nil, onState: @escaping @Sendable (UploadState) -> Void = { _ in }
  ) async throws -> OutboxEntry {
    let preparation = UploadPreparation(
      compressor: compressor, temporaryDirectory: temporaryDirectory)
    return try await preparation.run(request, onState: onState) { prepared, _ in
      var fields: [QueuedUpload.Field] = []
      for field in request.fields {
        guard case .text(let value) = field.content else {
          throw CourierError(
            .invalidInput, code: "upload_field_not_text",
            serverMessage: "A queued upload carries text fields only (“\(field.name)” is not).",
            field: field.name)
        }
        fields.append(QueuedUpload.Field(name: field.name, value: value))
      }
      let tus = tusEndpoint ?? (transfer == .tus ? request.target : nil)
      var upload = QueuedUpload(
        transfer: transfer, tusEndpoint: transfer == .multipart ? nil : tus?.absoluteString,
        formTarget: transfer == .tus ? nil : request.target.absoluteString,
        tusConfirmation: tusEndpoint == nil && transfer == .tus
          ? request.confirmation : tusConfirmation,
        formConfirmation: request.confirmation,
        title: request.title ?? request.file.lastPathComponent, fields: fields,
        filename: prepared.part.filename ?? request.file.lastPathComponent,
        contentType: prepared.part.contentType ?? "application/octet-stream",
        length: prepared.length, boundary: MultipartBoundary.random().value,
        source: request.file.standardizedFileURL.path, verdict: prepared.verdict)
      upload.allowsExpensive = allowsExpensive
      upload.interopVersion = interop?.number
      if transfer != .multipart && tus == nil {
        throw CourierError(
          .invalidInput, code: "upload_target_missing",
          serverMessage: "A resumable queued upload needs a tus endpoint.")
      }
      // What could never be sent is refused now, not at the replay: a field name, a file
      // name or a value the multipart encoding refuses.
      if transfer != .tus {
        _ = try MultipartForm(
          [.text("title", upload.title)] + request.fields + [prepared.part]
        ).layout(boundary: try MultipartBoundary(upload.boundary))
      }
      let uploadID = UUID().uuidString.lowercased()
      let operation = upload.operation(
        id: request.idempotencyKey.flatMap(UUID.init(uuidString:)) ?? UUID(), uploadID: uploadID,
        enqueuedAt: now())
      return try store.keep(prepared.url, as: uploadID) { () throws -> OutboxEntry in
        let result = try outbox.enqueue(operation)
        guard let entry = result.entry else {
          throw CourierError(
            .localStore, code: "upload_not_queued",
            serverMessage: "The upload could not be queued in the outbox.")
        }
        return entry
      }
    }
  }
}
