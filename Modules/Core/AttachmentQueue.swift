import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Keeps the files of a compound write (decision 2520) before its record is committed: each
/// file is prepared with the rules of every upload (an image compressed when worth it, else the
/// original and why; an original that must not leave the device is refused), copied into the
/// queued uploads' folder under a new attachment id with the description of its file part
/// (`part`: tus to `tusEndpoint` when the server offers it, else multipart to `formTarget`;
/// with no `formTarget`, tus to another server's endpoint, decision 2515), and the record is
/// committed while every copy is held against the sweep. A process killed at
/// any point leaves the record with its files, or neither (the sweep removes copies no entry
/// names). No request is made.
package struct AttachmentQueue: Sendable {
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Where the copies wait.
  package let store: any QueuedUploadStore
  /// The tus creation URL files go to when the server speaks tus.
  package let tusEndpoint: URL
  /// The multipart target otherwise; nil when `tusEndpoint` is another server's tus endpoint
  /// (`attachment_upload_url`, decision 2515): tus only, proven by the completion's offset,
  /// its bytes after the creation, and the upload's URL as the reference.
  package let formTarget: URL?
  /// Where a compressed image is written before it is kept.
  package let temporaryDirectory: URL

  /// Creates a queue.
  /// - Parameters:
  ///   - compressor: the image compressor.
  ///   - store: the queued uploads' folder.
  ///   - tusEndpoint: the tus creation URL.
  ///   - formTarget: the multipart target; nil for another server's tus endpoint.
  ///   - temporaryDirectory: where a compressed image is written first.
  package init(
    compressor: any ImageCompressor, store: any QueuedUploadStore, tusEndpoint: URL,
    formTarget: URL?, temporaryDirectory: URL = FileManager.default.temporaryDirectory
  ) {
    self.compressor = compressor
    self.store = store
    self.tusEndpoint = tusEndpoint
    self.formTarget = formTarget
    self.temporaryDirectory = temporaryDirectory
  }

  /// Prepares and keeps `files`, then runs `commit` with each field's local reference while
  /// the copies are held; when `commit` throws, the copies are removed.
  /// - Parameters:
  ///   - files: the file of each attachment field.
  ///   - commit: commits the record and its outbox entry, given the local references.
  /// - Returns: what `commit` returned.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput` for an original that must not
  ///   be sent, `cancelled`), `StoreError` when a copy cannot be kept, or what `commit` threw.
  package func keep<T: Sendable>(
    _ files: [String: URL], commit: @escaping ([String: String]) throws -> T
  ) async throws -> T {
    let ordered = files.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    return try await prepare(ordered[...], prepared: [], commit: commit)
  }

  private func prepare<T: Sendable>(
    _ rest: ArraySlice<(String, URL)>, prepared: [(String, URL, QueuedUpload)],
    commit: @escaping ([String: String]) throws -> T
  ) async throws -> T {
    guard let (field, file) = rest.first else {
      return try keepAll(prepared[...], references: [:], commit: commit)
    }
    let request = UploadRequest(
      file: file, target: formTarget ?? tusEndpoint, title: file.lastPathComponent, compress: true,
      confirmation: .record)
    let preparation = UploadPreparation(
      compressor: compressor, temporaryDirectory: temporaryDirectory)
    return try await preparation.run(request, onState: { _ in }) { ready, _ in
      var upload = QueuedUpload(
        transfer: formTarget == nil ? .tus : .auto, tusEndpoint: tusEndpoint.absoluteString,
        formTarget: formTarget?.absoluteString,
        tusConfirmation: formTarget == nil ? .status : .record, formConfirmation: .record,
        title: file.lastPathComponent,
        filename: ready.part.filename ?? file.lastPathComponent,
        contentType: ready.part.contentType ?? "application/octet-stream", length: ready.length,
        boundary: MultipartBoundary.random().value, source: file.standardizedFileURL.path,
        verdict: ready.verdict)
      upload.bytesAfterCreation = formTarget == nil
      return try await prepare(
        rest.dropFirst(), prepared: prepared + [(field, ready.url, upload)], commit: commit)
    }
  }

  private func keepAll<T>(
    _ rest: ArraySlice<(String, URL, QueuedUpload)>, references: [String: String],
    commit: ([String: String]) throws -> T
  ) throws -> T {
    guard let (field, url, upload) = rest.first else { return try commit(references) }
    let id = UUID().uuidString.lowercased()
    return try store.keep(url, as: id) {
      try store.writeNote(upload.payload.jsonText, "part", for: id)
      var references = references
      references[field] = Attachment.local(id)
      return try keepAll(rest.dropFirst(), references: references, commit: commit)
    }
  }
}
