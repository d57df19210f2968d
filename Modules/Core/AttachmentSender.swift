import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends the outbox entries of a collection with attachment fields (decision 2520): an entry
/// whose payload holds a local reference (`Attachment`) is a compound write, one entry with
/// parts. Its files go first, each through the queued-upload machinery (`QueuedUploadSender`:
/// tus where the server offers it, else multipart) under an `Idempotency-Key` derived from the
/// entry's operation id, so a replay after a crash finds the same stored file instead of making
/// a second; each stored file's reference is kept (`ref`) before its bytes go. Then the record
/// part: the collection's own sender, with the server's references in place of the local ones.
///
/// A file refused (a 4xx) refuses the whole entry with the server's words and the record is not
/// sent; a record refused after its files were stored keeps them (decision 2522): the entry
/// holds their references, so a retry or an edit sends the record with the same files.
package struct AttachmentSender<C: Clock>: ReplaySender, ReplayProbing
where C.Duration == Duration {
  /// The record part's sender.
  package let records: RecordSender
  /// The file parts' sender, over the data folder's queued uploads.
  package let files: QueuedUploadSender<C>
  /// Told, by attachment id, when a file part's transfer starts, progresses and ends; nil when
  /// no one follows (the session's tracker does, for the TUI's "uploading 40%").
  package var fileProgress: FileProgress?

  /// Where a file part's transfer stands, by attachment id.
  package struct FileProgress: Sendable {
    /// A transfer starts.
    package var began: @Sendable (String) -> Void
    /// The bytes sent so far.
    package var progressed: @Sendable (String, TransferProgress) -> Void
    /// The transfer ended, delivered or not.
    package var ended: @Sendable (String) -> Void

    /// Creates the three calls.
    /// - Parameters:
    ///   - began: a transfer starts.
    ///   - progressed: the bytes sent so far.
    ///   - ended: the transfer ended.
    package init(
      began: @escaping @Sendable (String) -> Void,
      progressed: @escaping @Sendable (String, TransferProgress) -> Void,
      ended: @escaping @Sendable (String) -> Void
    ) {
      self.began = began
      self.progressed = progressed
      self.ended = ended
    }
  }

  /// Creates a sender.
  /// - Parameters:
  ///   - records: the collection's record sender.
  ///   - files: the queued uploads' sender.
  ///   - fileProgress: told how each file part's transfer goes.
  package init(
    records: RecordSender, files: QueuedUploadSender<C>, fileProgress: FileProgress? = nil
  ) {
    self.records = records
    self.files = files
    self.fileProgress = fileProgress
  }

  /// The record sender's (the transport's).
  package var taskExecutor: (any TaskExecutor)? { records.taskExecutor }

  /// The `Idempotency-Key` of a compound write's file in `field`: the operation's id and the
  /// field, the same for every attempt of the entry's life.
  /// - Parameters:
  ///   - operation: the entry's operation.
  ///   - field: the attachment field.
  /// - Returns: the key.
  package static func fileKey(_ operation: OutboxOperation, field: String) -> String {
    "\(operation.id.uuidString.lowercased()).\(field)"
  }

  /// Sends the files a compound write still waits for, then its record (see the type's
  /// summary); any other entry goes to the record sender as it is.
  /// - Parameters:
  ///   - entry: the entry, its attempt counted.
  ///   - progress: told the file bytes the server confirmed so far.
  /// - Returns: the record part's answer, or the file part's failure.
  package func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?)
    async -> ReplayAnswer
  {
    let pending = Attachment.pending(
      in: entry.operation.payload, fields: records.collection.attachments)
    guard let payload = entry.operation.payload, !pending.isEmpty else {
      return await records.send(entry, progress: progress)
    }
    var references: [String: String] = [:]
    for (field, id) in pending {
      do {
        references[field] = try await storedReference(field, id, entry, progress: progress)
      } catch {
        var failure = CourierError.wrapping(
          error, context: "\(field) of \(entry.key)")
        if Task.isCancelled { failure.kind = .cancelled }
        return .failed(QueuedUpload.replayError(failure))
      }
    }
    var sent = entry
    sent.operation.payload = Attachment.substituting(payload, references)
    return await records.send(sent, progress: nil)
  }

  /// Asks the server about the entry's record (the record sender's probe).
  /// - Parameter entry: the entry about to be parked.
  /// - Returns: nil when the server itself answered, else why not.
  package func probe(_ entry: OutboxEntry) async -> CourierError? {
    await records.probe(entry)
  }

  /// The server's reference of the file kept as `id`: the one kept when it was stored, else
  /// the file sent now, its reference kept, then its bytes removed.
  private func storedReference(
    _ field: String, _ id: String, _ entry: OutboxEntry,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> String {
    let store = files.store
    if let kept = store.note("ref", for: id) { return kept }
    guard let text = store.note("part", for: id), let described = try? JSONValue(parsing: text),
      let upload = try? QueuedUpload(payload: described)
    else {
      throw CourierError(
        .fileUnavailable, code: "upload_bytes_missing",
        serverMessage: "The file of “\(field)” is missing from the data folder; it can't be "
          + "sent. Discard the write and attach the file again.", field: field)
    }
    let tracking = fileProgress
    tracking?.began(id)
    defer { tracking?.ended(id) }
    let reference = try await files.transfer(
      id, upload, key: Self.fileKey(entry.operation, field: field),
      options: files.options.forEntry(entry),
      progress: { sent in
        tracking?.progressed(id, sent)
        progress?(sent)
      })
    guard let reference else {
      throw CourierError(
        .notTheServer, code: "attachment_unreferenced",
        serverMessage: "The server stored the file of “\(field)” without saying under which "
          + "id or URL.", field: field)
    }
    // The reference first: the proof removes the bytes, and a crash in between must find one.
    try store.writeNote(reference, "ref", for: id)
    try? store.markDelivered(id)
    return reference
  }
}
