import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where the bytes of queued uploads wait in the data folder until the server confirms them
/// (decision 1302), each under its upload's id, with the resume record of its tus transfer.
///
/// The crash discipline of the outbox holds for them: bytes are durable (written and flushed)
/// before the entry that points to them is committed, and a sweep removes the files no entry
/// points to, but never those of an upload being queued at that moment. So a process killed at
/// any point leaves both the entry and its bytes, or neither.
package protocol QueuedUploadStore: Sendable {
  /// Keeps a copy of `source`'s bytes under `id`, durably, then runs `commit` (which records
  /// the outbox entry) while no sweep can remove them. When `commit` throws, the copy is
  /// removed and the error rethrown.
  /// - Parameters:
  ///   - source: the file whose bytes are sent (the compressed image, or the original).
  ///   - id: the upload's id.
  ///   - commit: records the entry.
  /// - Returns: what `commit` returned.
  /// - Throws: `StoreError` when the copy cannot be made (nothing is left then), or what
  ///   `commit` threw.
  func keep<T>(_ source: URL, as id: String, commit: () throws -> T) throws -> T

  /// The file the bytes of `id` are kept in (it may not exist: delivered, or never kept).
  /// - Parameter id: the upload's id.
  /// - Returns: its URL.
  func body(_ id: String) -> URL

  /// The resume records of queued tus uploads, each under its upload's id.
  var resumeRecords: any ResumableUploadStore { get }

  /// Records, durably, that the server proved it stored `id`, then removes its bytes and its
  /// resume record: a replay after a crash before the entry was completed finds the proof and
  /// sends nothing again.
  /// - Parameter id: the upload's id.
  /// - Throws: `StoreError` when the proof cannot be written (the bytes are kept then).
  func markDelivered(_ id: String) throws

  /// Whether the server proved it stored `id` (``markDelivered(_:)``).
  /// - Parameter id: the upload's id.
  /// - Returns: true once delivered.
  func isDelivered(_ id: String) -> Bool

  /// Writes a short text kept beside the bytes of `id`, durably (a whole file or none): the
  /// description of an attachment's file part (`part`) and the server's reference once it is
  /// stored (`ref`, decision 2520). It goes with the upload's other files.
  /// - Parameters:
  ///   - text: the text.
  ///   - kind: `part` or `ref`.
  ///   - id: the upload's id.
  /// - Throws: `StoreError` when it cannot be written.
  func writeNote(_ text: String, _ kind: String, for id: String) throws

  /// The text ``writeNote(_:_:for:)`` kept.
  /// - Parameters:
  ///   - kind: `part` or `ref`.
  ///   - id: the upload's id.
  /// - Returns: the text; nil when none was written.
  func note(_ kind: String, for id: String) -> String?

  /// Removes the files of every upload `live` does not name (delivered and completed,
  /// discarded, or kept by a process killed before its entry was committed), except those of
  /// an upload being kept right now; skipped when that cannot be told.
  /// - Parameter live: the ids the outbox's upload entries name, read once the sweep holds
  ///   off every `keep` (so an entry committed just before is seen).
  /// - Returns: the ids whose files were removed.
  @discardableResult
  func sweep(keeping live: () throws -> Set<String>) -> [String]
}
