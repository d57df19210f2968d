import CourierCore
import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Uploads kept in the outbox and sent by the session's `sync()` and `watch()` in outbox order
/// with every other write (decision 1302): queued at once, with or without a network, sent with
/// tus 1.0.0 or as one multipart POST under one `Idempotency-Key` for their whole life, and
/// followed byte by byte while this process sends them. Reach it as
/// ``CourierSession/queuedUploads``.
///
/// ```swift
/// let entry = try await courier.queuedUploads.add(video, title: "Train")
/// _ = try await courier.sync()        // sends it, or keeps it for later
/// ```
public struct QueuedUploads: Sendable {
  private let store: SessionStore
  private var environment: CourierEnvironment { store.environment }

  init(store: SessionStore) { self.store = store }

  /// Queues an upload in the outbox and returns at once: the file is compressed once with the
  /// rules of ``Uploads/send(_:title:fields:compress:compression:)``, the exact bytes to send
  /// are kept in the data folder and an outbox entry describing them is committed (a crash
  /// leaves both or neither). Sent with tus when it is resumable (an interruption, even
  /// `kill -9`, resumes where the server stopped) or when the target speaks it, else as one
  /// multipart POST. The bytes are removed once the server proves it stored them; a refusal
  /// (4xx) keeps the entry and its bytes until ``SessionOutbox/discard(operationID:)``.
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the title (the file's name when nil).
  ///   - fields: other text fields, in order.
  ///   - target: another target (another tus server, or a multipart URL on the base URL's
  ///     server); nil for the base URL's `/uploads` (tus) or `/photos` (multipart), whose
  ///     answers must name the stored photo to count as delivered.
  ///   - resumable: true for tus, false for multipart; nil for the configuration's
  ///     `resumable_uploads`, and otherwise tus when the target answers `OPTIONS` as a tus
  ///     server.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the outbox entry, pending; `key.id` names the upload.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, `localStore` when the data
  ///   folder cannot take it: nothing is left then).
  @discardableResult
  public func add(
    _ file: URL, title: String? = nil, fields: [(name: String, value: String)] = [],
    to target: URL? = nil, resumable: Bool? = nil, compress: Bool = true,
    compression: CompressionOptions = CompressionOptions()
  ) async throws -> OutboxEntry {
    try await add(
      file, title: title, fields: fields, to: target, resumable: resumable, compress: compress,
      compression: compression, allowsExpensiveNetworkAccess: false)
  }

  /// Queues an upload as ``add(_:title:fields:to:resumable:compress:compression:)`` does,
  /// saying whether it may go over an expensive (metered) network, as URLSession's
  /// `allowsExpensiveNetworkAccess`: the path policy holds uploads over 1 MiB back on one
  /// otherwise, until the network is not metered (decision 2610).
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the title (the file's name when nil).
  ///   - fields: other text fields, in order.
  ///   - target: another target; nil for the base URL's.
  ///   - resumable: true for tus, false for multipart; nil as the configuration says.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  ///   - allowsExpensiveNetworkAccess: true to send it over a metered network too.
  /// - Returns: the outbox entry, pending; `key.id` names the upload.
  /// - Throws: as the other `add`.
  @discardableResult
  public func add(
    _ file: URL, title: String? = nil, fields: [(name: String, value: String)] = [],
    to target: URL? = nil, resumable: Bool? = nil, compress: Bool = true,
    compression: CompressionOptions = CompressionOptions(), allowsExpensiveNetworkAccess: Bool
  ) async throws -> OutboxEntry {
    let client = environment.client
    let transfer: QueuedUpload.Transfer =
      switch resumable ?? (environment.config.resumableUploads ? true : nil) {
      case true?: .tus
      case false?: .multipart
      case nil: .auto
      }
    let request = UploadRequest(
      file: file, target: try target ?? client.url(transfer == .tus ? "/uploads" : "/photos"),
      title: title, fields: fields.map { MultipartPart.text($0.name, $0.value) },
      compress: compress, compression: compression,
      confirmation: target == nil ? .record : (transfer == .tus ? .status : .json))
    let tusEndpoint = transfer == .auto ? try target ?? client.url("/uploads") : nil
    return try await add(
      request, transfer: transfer, tusEndpoint: tusEndpoint,
      tusConfirmation: target == nil ? .record : .status,
      allowsExpensive: allowsExpensiveNetworkAccess)
  }

  /// Queues an upload as `request` says (see
  /// ``add(_:title:fields:to:resumable:compress:compression:)``).
  /// - Parameters:
  ///   - request: the file, fields and compression; `target` and `confirmation` are the
  ///     multipart ones, or the tus ones for `.tus` without `tusEndpoint`; a UUID
  ///     `idempotencyKey` becomes the entry's operation id.
  ///   - transfer: tus, multipart, or tus when `tusEndpoint` speaks it.
  ///   - tusEndpoint: the tus creation URL for `.auto` (and `.tus`, when not `target`).
  ///   - tusConfirmation: what the tus completion must show.
  ///   - allowsExpensive: whether it may go over an expensive path although the path policy
  ///     holds large uploads back there (decision 2610).
  ///   - interop: the IETF draft's interop version its creation speaks (`--interop`); nil for
  ///     the configuration's when it is sent.
  ///   - onState: told `compressing` and `prepared`.
  /// - Returns: the outbox entry, pending.
  /// - Throws: as the other `add`; `StoreError` when the local store cannot be opened.
  @discardableResult
  package func add(
    _ request: UploadRequest, transfer: QueuedUpload.Transfer, tusEndpoint: URL? = nil,
    tusConfirmation: DeliveryProof.UploadConfirmation = .status, allowsExpensive: Bool = false,
    interop: IETFInterop? = nil, onState: @escaping @Sendable (UploadState) -> Void = { _ in }
  ) async throws -> OutboxEntry {
    let shared = try store.open(warn: PrivateFiles.warnOnStandardError)
    let queue = UploadQueue(
      compressor: environment.compressor, store: store.queuedUploadStore, outbox: shared.store)
    let entry = try await queue.enqueue(
      request, transfer: transfer, tusEndpoint: tusEndpoint, tusConfirmation: tusConfirmation,
      allowsExpensive: allowsExpensive, interop: interop, onState: onState)
    shared.replayer.reloadState()
    shared.observation.recordOutbox()
    // While a watch runs, the store's run loop sends it now (as it does any write).
    shared.replayer.requestReplay()
    return entry
  }

  /// The queued uploads in the outbox, in order, each with the bytes the server confirmed and,
  /// while this process sends it, the bytes sent so far.
  /// - Returns: one progress per queued upload entry (pending or refused).
  /// - Throws: `StoreError` when the local store cannot be opened or read.
  public func current() throws -> [QueuedUploadProgress] {
    // The uploads' entries only: this runs after every change of the sync state, and a
    // replay of thousands of writes must not decode them all each time.
    let entries = try store.open(warn: PrivateFiles.warnOnStandardError).store.entries(
      in: QueuedUpload.collection)
    let tracker = store.uploadTracker
    let (sending, started) = (tracker.sending, tracker.started)
    let files = store.queuedUploadStore
    return entries.map { entry in
      let id = entry.key.id
      let upload = try? QueuedUpload(payload: entry.operation.payload)
      var confirmed = files.resumeRecords.load(id)?.confirmedOffset ?? 0
      if files.isDelivered(id) { confirmed = upload?.length ?? confirmed }
      return QueuedUploadProgress(
        entry: entry, upload: upload, confirmed: confirmed, sending: sending[id],
        resumedAt: sending[id] == nil ? nil : started[id])
    }
  }

  /// The file parts of a compound write (decision 2520) and where each stands: queued,
  /// uploading (the bytes the server confirmed), or stored with the server's reference.
  /// - Parameter entry: an outbox entry of any collection.
  /// - Returns: its file parts still named by local references; empty for any other entry.
  package func attachmentParts(of entry: OutboxEntry) -> [AttachmentPart] {
    guard
      let collection = store.declared.first(where: { $0.name == entry.key.collection }),
      !collection.attachments.isEmpty
    else { return [] }
    let pending = Attachment.pending(in: entry.operation.payload, fields: collection.attachments)
    guard !pending.isEmpty else { return [] }
    return pending.map { attachmentPart(field: $0.field, id: $0.id) }
  }

  /// The URLs of stored files pending writes reference, which the response cache must never
  /// evict (decision 2504): for each pending write of a collection with attachment fields, each
  /// such field's photo id (the server's reference it carries, or the one its stored file part
  /// got) as `GET /photos/{id}` on the base URL. Empty when the local store cannot be read.
  /// - Returns: absolute URLs.
  package func referencedURLs() -> Set<String> {
    let declared = store.declared.filter { !$0.attachments.isEmpty }
    guard !declared.isEmpty,
      let pending = try? store.open(warn: PrivateFiles.warnOnStandardError).store.pending()
    else { return [] }
    var urls = Set<String>()
    for entry in pending {
      guard let collection = declared.first(where: { $0.name == entry.key.collection }) else {
        continue
      }
      for field in collection.attachments {
        let value = entry.operation.payload?[field]
        let reference =
          Attachment.localID(value).map { store.queuedUploadStore.note("ref", for: $0) }
          ?? value?.stringValue
        // An id is a path segment as it is: anything else names no photo URL.
        guard let reference, let url = environment.attachmentURL(reference) else { continue }
        urls.insert(url.absoluteString)
      }
    }
    return urls
  }

  /// Where the file kept as `id` for `field` stands (decision 2520).
  /// - Parameters:
  ///   - field: the attachment field.
  ///   - id: the attachment's id (a local reference's).
  /// - Returns: queued, uploading (the bytes confirmed) or stored with the server's reference.
  package func attachmentPart(field: String, id: String) -> AttachmentPart {
    let files = store.queuedUploadStore
    let upload = files.note("part", for: id).flatMap { try? JSONValue(parsing: $0) }
      .flatMap { try? QueuedUpload(payload: $0) }
    let sending = store.uploadTracker.sending[id]
    return AttachmentPart(
      field: field, id: id,
      confirmed: sending ?? files.resumeRecords.load(id)?.confirmedOffset ?? 0,
      total: upload?.length ?? 0, reference: files.note("ref", for: id))
  }

  /// ``current()`` now, then after every change: a transfer's progress (at most ten times a
  /// second), an upload queued, sent, refused or discarded.
  /// - Returns: the stream (the newest list only, for a slow reader); it ends when the local
  ///   store cannot be opened.
  public func updates() -> AsyncStream<[QueuedUploadProgress]> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: [QueuedUploadProgress].self, bufferingPolicy: .bufferingNewest(1))
    let uploads = self
    let tracker = store.uploadTracker
    let store = store
    let task = Task {
      guard let shared = try? store.open(warn: PrivateFiles.warnOnStandardError) else {
        continuation.finish()
        return
      }
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          for await _ in tracker.changes() {
            if let list = try? uploads.current() { continuation.yield(list) }
          }
        }
        group.addTask {
          for await _ in shared.replayer.states() { tracker.notify() }
        }
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Cancels on the server the upload a queued upload started (tus or the IETF draft:
  /// `DELETE` on its address, decision 2705), before the entry is discarded. Best effort.
  /// - Parameter entry: an outbox entry; any other collection's is left alone.
  /// - Returns: nil when no upload was started on a server; true when the server says it is
  ///   gone; false when it could not be cancelled (no route, a refusal).
  package func cancelStarted(_ entry: OutboxEntry) async -> Bool? {
    guard entry.key.collection == QueuedUpload.collection else { return nil }
    let sender = Self.sender(environment: environment, store: store.queuedUploadStore)
    return await sender.cancelStarted(
      entry.key.id, try? QueuedUpload(payload: entry.operation.payload),
      options: environment.client.options)
  }

  /// The sender of queued uploads.
  static func sender(environment: CourierEnvironment, store: FileQueuedUploadStore)
    -> QueuedUploadSender<ContinuousClock>
  {
    var sender = QueuedUploadSender(
      transport: environment.client.transport,
      singleAttemptTransport: environment.singleAttemptTransport,
      executor: RetryExecutor(
        policy: environment.config.retry, clock: ContinuousClock(),
        metrics: environment.metrics),
      store: store, options: environment.client.options, hasher: environment.fileHasher)
    sender.interop = environment.config.ietfInteropVersion
    return sender
  }

  /// The replay route of queued uploads: their sender, followed by the tracker.
  static func route(
    environment: CourierEnvironment, tracker: QueuedUploadTracker,
    store: FileQueuedUploadStore, tidy: @escaping @Sendable () -> Void,
    changed: @escaping @Sendable () -> Void
  ) -> ReplayRoute {
    let config = environment.config
    let sender = sender(environment: environment, store: store)
    let records = store.resumeRecords
    return ReplayRoute(
      collection: QueuedUpload.collection,
      sender: TrackedReplaySender(
        base: sender, tracker: tracker, tidy: tidy,
        confirmed: { records.load($0)?.confirmedOffset }, changed: changed),
      decision: ReplayDecision(policy: config.conflictPolicy))
  }
}
