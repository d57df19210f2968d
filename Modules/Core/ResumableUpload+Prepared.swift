import CourierDomain
import CourierPorts
import CourierSystem

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

extension ResumableUpload {
  /// The record of a direct resumable upload (tus or the IETF draft) of prepared bytes, and
  /// its key in `store` (decision 1303): a file sent as it is is known by what the file system
  /// says of it, read before any byte is; the compressed copy, or a file changed too recently
  /// for its times to tell, by its SHA-256 as well.
  /// - Parameters:
  ///   - prepared: the bytes to send.
  ///   - request: the upload.
  ///   - store: where an earlier run's record may be (it may ask for the hash).
  ///   - hasher: the SHA-256 of the bytes.
  ///   - wallClock: the wall clock a file's change time is compared with.
  /// - Returns: the fresh record and its key.
  /// - Throws: a failure to read the bytes.
  static func made(
    for prepared: PreparedUpload, request: UploadRequest, store: (any ResumableUploadStore)?,
    hasher: any FileHasher, wallClock: any WallClock
  ) throws -> (record: ResumableUpload, key: String) {
    let path = request.file.standardizedFileURL.path
    let endpoint = request.target.absoluteString
    let key = storageKey(endpoint: endpoint, file: path)
    let derived = prepared.verdict.send == .compressed
    let original = identity(ofFile: path)
    let identity = derived ? nil : original
    let checkedAt = Int64((wallClock.now().timeIntervalSince1970 * 1_000_000_000).rounded(.down))
    let hashed = needsDigest(
      derived: derived, identity: identity, checkedAt: checkedAt, saved: store?.load(key))
    let record = ResumableUpload(
      endpoint: endpoint, file: path, fileSize: prepared.originalSize,
      fileModified: original?.modified ?? 0,
      sha256: hashed
        ? SHA256.hex(try hasher.sha256(of: prepared.url, offset: 0, length: prepared.length))
        : "",
      length: prepared.length,
      idempotencyKey: request.idempotencyKey ?? UUID().uuidString.lowercased(),
      fileIdentity: identity)
    return (record, key)
  }

  /// The file's identity (`stat`, following a symbolic link as the upload's open does); nil
  /// when it cannot be read.
  /// - Parameter path: the file.
  /// - Returns: its identity.
  static func identity(ofFile path: String) -> FileIdentity? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    #if canImport(Darwin)
      let modified = info.st_mtimespec
      let changed = info.st_ctimespec
    #else
      let modified = info.st_mtim
      let changed = info.st_ctim
    #endif
    return FileIdentity(
      device: UInt64(truncatingIfNeeded: info.st_dev),
      inode: UInt64(truncatingIfNeeded: info.st_ino), size: Int64(info.st_size),
      modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
      changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec))
  }
}
