import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where resumable uploads' records are kept between processes, so an upload killed with -9
/// resumes where the server stopped. An implementation writes atomically and durably: after a
/// crash a record is the old one or the new one, never a mix.
package protocol ResumableUploadStore: Sendable {
  /// The record kept under `key`, if any.
  /// - Parameter key: `ResumableUpload.storageKey(endpoint:file:)`.
  /// - Returns: the record; nil when there is none (or it cannot be read).
  func load(_ key: String) -> ResumableUpload?
  /// Saves a record under `key`, replacing any, durably.
  /// - Parameters:
  ///   - record: the record.
  ///   - key: its key.
  /// - Throws: when it cannot be written.
  func save(_ record: ResumableUpload, as key: String) throws
  /// Removes the record under `key`; nothing when there is none.
  /// - Parameter key: the key.
  func remove(_ key: String)
}
