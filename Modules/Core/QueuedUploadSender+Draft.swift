import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A queued upload's form sent so that a server speaking the IETF draft makes it resumable
/// (decision 2703): the entry's own bytes under the boundary chosen when it was queued, its
/// record in the queued uploads' resume records under the entry's id, so a process killed
/// after the `104` resumes on the next `courier sync`.
extension QueuedUploadSender {
  /// Where a queued upload stands: started with tus, started with the draft, or neither.
  enum Started: Equatable {
    case none
    case tus
    case draft
  }

  /// Which protocol the saved record of `id` started, told by the endpoint it names.
  /// - Parameters:
  ///   - id: the upload.
  ///   - upload: its description.
  /// - Returns: where it stands.
  func started(_ id: String, _ upload: QueuedUpload) -> Started {
    guard let saved = store.resumeRecords.load(id), saved.uploadURL != nil else { return .none }
    return saved.endpoint == upload.formTarget ? .draft : .tus
  }

  /// Whether the form's target says it takes the draft's appends (`OPTIONS`, decision 2702);
  /// a failed request counts as no.
  /// - Parameters:
  ///   - target: the form's target.
  ///   - options: the call's options.
  /// - Returns: true when offered.
  func draftOffered(_ target: URL, options: TransportOptions) async -> Bool {
    guard let request = try? HTTPRequest(checking: target, method: .options),
      let (answer, _) = try? await singleAttemptTransport.send(request, body: nil, options: options)
    else { return false }
    return IETFUpload.offers(answer)
  }

  /// Sends the form with the draft's fields, resuming the record of `id` when there is one.
  /// - Parameters:
  ///   - id: the upload.
  ///   - upload: its description.
  ///   - parts: the form's parts, in order.
  ///   - target: the form's target.
  ///   - key: the entry's `Idempotency-Key`.
  ///   - options: the call's options.
  ///   - onState: told `uploading` and `retrying`.
  /// - Returns: the server's reference to what it stored: the reply's `id`, else the
  ///   `Courier-Photo-Id` of a `HEAD` that found the upload complete.
  /// - Throws: the classified failure.
  func sendDraft(
    _ id: String, _ upload: QueuedUpload, parts: [MultipartPart], to target: URL, key: String,
    options: TransportOptions, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> String? {
    let layout = try MultipartForm(parts).layout(boundary: try MultipartBoundary(upload.boundary))
    let fresh = ResumableUpload(
      endpoint: target.absoluteString, file: store.body(id).path, fileSize: upload.length,
      fileModified: 0, sha256: "", length: layout.contentLength, idempotencyKey: key)
    var draft = DraftUpload(
      transport: singleAttemptTransport, executor: executor, store: store.resumeRecords,
      options: options, progressGranularity: 64 * 1024, firstPiece: chunkSize)
    // The entry's own version (`--queue --interop`), else the configured one (decision 2707).
    let pin = upload.interopVersion.flatMap(IETFInterop.init) ?? interop
    draft.interop = pin ?? .current
    draft.pinned = pin != nil
    let answer = try await draft.send(
      layout, to: target, record: fresh, key: id, confirmation: upload.formConfirmation,
      fileSize: upload.length, onState: onState, onResume: { _, _ in })
    return (try? JSONValue(parsing: answer.body.bytes))?["id"]?.stringValue
      ?? answer.response.headerFields[.courierPhotoID]
  }
}

extension QueuedUploadSender {
  /// Cancels on the server the upload that `id` started, tus or the draft (`DELETE` on its
  /// address, with the field of the protocol that started it), so a discarded queued upload
  /// leaves no partial upload holding the server's space (decision 2705). Best effort: the
  /// entry goes whatever the answer.
  /// - Parameters:
  ///   - id: the upload.
  ///   - upload: its description; nil when its payload cannot be read (then tus's field).
  ///   - options: the request options.
  /// - Returns: nil when no upload was started; true when the server answered that the
  ///   upload is gone (2xx, 404, 410), false otherwise (no route, a refusal).
  package func cancelStarted(_ id: String, _ upload: QueuedUpload?, options: TransportOptions)
    async -> Bool?
  {
    guard let saved = store.resumeRecords.load(id),
      let url = saved.uploadURL.flatMap(URL.init(string:))
    else { return nil }
    let draft = upload.map { started(id, $0) == .draft } ?? false
    guard
      let request = try? draft
        ? DraftStrategy.deletion(url, interop: .saved(saved.interopVersion))
        : TusStrategy.deletion(url),
      let (answer, _) = try? await singleAttemptTransport.send(
        request, body: nil, options: options)
    else { return false }
    let gone = answer.status.kind == .successful || [404, 410].contains(answer.status.code)
    if gone { store.resumeRecords.remove(id) }
    return gone
  }
}
