import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What survives a killed process about one resumable (tus) upload: where it goes, its
/// `Idempotency-Key`, the identity of the bytes it sends and the offset the server confirmed.
/// Saved before the creation is sent and after each confirmed chunk; removed on completion.
///
/// The identity of the bytes (decision 1303): a file sent as it is is known by what the file
/// system says of it (``FileIdentity``: device, inode, size, modification and change times in
/// nanoseconds), which any write changes, without reading it; derived bytes (a compressed
/// image, small) and a file whose metadata cannot vouch for it (``FileIdentity/isRacy(checkedAt:)``)
/// by their SHA-256 as well.
package struct ResumableUpload: Sendable, Equatable, Codable {
  /// A file as the file system identifies it: a write of any byte, a truncation, a rename over
  /// it or a restore from a copy changes at least one field (the change time cannot be set
  /// back by a program: `utimensat` restores the modification time, not the change time).
  package struct FileIdentity: Sendable, Equatable, Codable {
    /// The device the file is on (`st_dev`).
    package var device: UInt64
    /// Its inode number (`st_ino`).
    package var inode: UInt64
    /// Its size in bytes.
    package var size: Int64
    /// Its modification time (`st_mtim`), in nanoseconds since 1970.
    package var modified: Int64
    /// Its status change time (`st_ctim`), in nanoseconds since 1970: set by the kernel on
    /// every write and metadata change, to the current time.
    package var changed: Int64

    /// Creates an identity.
    /// - Parameters:
    ///   - device: `st_dev`.
    ///   - inode: `st_ino`.
    ///   - size: the size.
    ///   - modified: the modification time (ns).
    ///   - changed: the change time (ns).
    package init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
      self.device = device
      self.inode = inode
      self.size = size
      self.modified = modified
      self.changed = changed
    }

    /// Whether the file changed so shortly before `checkedAt` that a later write could keep
    /// the same change time: file times come from a clock that moves in ticks (a few
    /// milliseconds on Linux; whole seconds, or two, on file systems that keep no fractions),
    /// so a write in the same tick as the look is not told apart by them. Such an identity
    /// cannot vouch for the bytes on a later run, and the bytes are hashed as well. A
    /// file system keeping no fractions is recognised by times that have none.
    /// - Parameter checkedAt: when the identity was read, in nanoseconds since 1970.
    /// - Returns: true when the times cannot tell a later write apart.
    package func isRacy(checkedAt: Int64) -> Bool {
      let coarse = modified % 1_000_000_000 == 0 && changed % 1_000_000_000 == 0
      let margin: Int64 = coarse ? 2_000_000_000 : 100_000_000
      return changed > checkedAt - margin
    }
  }

  /// The tus endpoint the upload was created at.
  package var endpoint: String
  /// The original file's absolute path.
  package var file: String
  /// The original file's size, in bytes.
  package var fileSize: Int64
  /// The original file's modification time, in nanoseconds since 1970.
  package var fileModified: Int64
  /// SHA-256 (hex) of the bytes sent (the compressed image, or the file itself), when they
  /// were hashed: empty for a file sent as it is whose ``fileIdentity`` vouches for it, and
  /// for a queued upload's own copy (the outbox entry is its identity).
  package var sha256: String
  /// The original's identity when it is sent as it is; nil for derived bytes, a queued
  /// upload's copy, and records saved before identities were kept.
  package var fileIdentity: FileIdentity?
  /// The number of bytes sent: the upload's `Upload-Length`.
  package var length: Int64
  /// The `Idempotency-Key` of the creation, the same for the upload's whole life.
  package var idempotencyKey: String
  /// The upload URL, once the server gave it.
  package var uploadURL: String?
  /// The offset the server last confirmed.
  package var confirmedOffset: Int64
  /// The bytes per second the server's answers last confirmed (decision 2704), so that a new
  /// process sizes its first piece by the link instead of guessing; nil when never measured
  /// (and in records saved before it was kept).
  package var confirmedRate: Int64?
  /// The IETF draft's interop version the upload was created at (decision 2708), so that its
  /// resumption in any later process speaks it; nil for tus, and in records saved before
  /// versions were kept (those speak 8: `IETFInterop.saved`).
  package var interopVersion: Int?

  /// Creates a record.
  /// - Parameters:
  ///   - endpoint: the tus endpoint.
  ///   - file: the original file's path.
  ///   - fileSize: its size.
  ///   - fileModified: its modification time (ns).
  ///   - sha256: the sent bytes' SHA-256, hex.
  ///   - length: the upload's length.
  ///   - idempotencyKey: the creation's key.
  ///   - uploadURL: the upload URL, if known.
  ///   - confirmedOffset: the confirmed offset.
  ///   - fileIdentity: the original's identity when it is sent as it is.
  package init(
    endpoint: String, file: String, fileSize: Int64, fileModified: Int64, sha256: String,
    length: Int64, idempotencyKey: String, uploadURL: String? = nil, confirmedOffset: Int64 = 0,
    fileIdentity: FileIdentity? = nil
  ) {
    self.endpoint = endpoint
    self.file = file
    self.fileSize = fileSize
    self.fileModified = fileModified
    self.sha256 = sha256
    self.fileIdentity = fileIdentity
    self.length = length
    self.idempotencyKey = idempotencyKey
    self.uploadURL = uploadURL
    self.confirmedOffset = confirmedOffset
  }

  /// The name a record is kept under: the same endpoint and file give the same name.
  /// - Parameters:
  ///   - endpoint: the tus endpoint.
  ///   - file: the original file's absolute path.
  /// - Returns: 64 hex digits.
  package static func storageKey(endpoint: String, file: String) -> String {
    SHA256.hex(SHA256.hash(Data("\(endpoint)\n\(file)".utf8)))
  }

  /// Whether this saved record describes the same bytes to the same endpoint as `other`, so
  /// the upload can go on where the server stopped; any change to the file starts over
  /// (decision 1303):
  /// - the endpoint, path, length, size and modification time must match;
  /// - identities kept on both sides must match (a write in place, even of the same size with
  ///   the modification time put back, changes the change time);
  /// - a hash kept on this side must be matched by the same hash on the other (derived bytes,
  ///   a racy identity); a record without an identity (older records) resumes on its hash
  ///   only, and neither side with an identity nor a hash is a queued upload's own copy, whose
  ///   outbox entry vouches for it.
  /// - Parameter other: the record made for the upload about to start.
  /// - Returns: true when it resumes.
  package func resumes(_ other: ResumableUpload) -> Bool {
    guard
      endpoint == other.endpoint && file == other.file && fileSize == other.fileSize
        && fileModified == other.fileModified && length == other.length
    else { return false }
    switch (fileIdentity, other.fileIdentity) {
    case (let saved?, let fresh?):
      guard saved == fresh else { return false }
    case (nil, nil):
      break
    default:
      // One side predates identities, or sends derived bytes: only a hash can tell.
      guard !sha256.isEmpty else { return false }
    }
    return sha256.isEmpty || sha256 == other.sha256
  }

  /// Whether the upload about to start must hash the bytes it sends (decision 1303): derived
  /// bytes always (they are small: a compressed image); a file sent as it is only when its
  /// identity is unknown or racy (then it cannot vouch for the bytes later), or when `saved`,
  /// the record it would resume, can only be matched by its hash.
  /// - Parameters:
  ///   - derived: whether the bytes sent are not the original file's (compressed).
  ///   - identity: the original's identity now; nil when it could not be read.
  ///   - checkedAt: when it was read, in nanoseconds since 1970.
  ///   - saved: the record kept for this endpoint and file, if any, before its check.
  /// - Returns: true when the bytes are to be hashed.
  package static func needsDigest(
    derived: Bool, identity: FileIdentity?, checkedAt: Int64, saved: ResumableUpload?
  ) -> Bool {
    guard !derived, let identity, !identity.isRacy(checkedAt: checkedAt) else { return true }
    guard let saved, !saved.sha256.isEmpty else { return false }
    // A hash vouches for the saved record: resuming it takes the same hash now, unless its
    // identity already says the file changed (then it starts over, and nothing needs a hash).
    guard let kept = saved.fileIdentity else { return true }
    return kept == identity
  }
}
