import CourierDomain
import CourierPorts

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

/// Resumable uploads' records in `<data dir>/uploads/<key>.json`, private to the user
/// (folder 0700, files 0600, decision 0405), each replaced atomically and durably: written to
/// a temporary file, fsynced, renamed over the record, then the folder fsynced. A crash leaves
/// the old record or the new one.
package struct FileResumableUploadStore: ResumableUploadStore {
  /// The folder the records are in.
  package let directory: URL

  /// A store in `directory` (created on the first save).
  /// - Parameter directory: the folder, e.g. `<data dir>/uploads`.
  package init(directory: URL) { self.directory = directory }

  /// The record kept under `key`; nil when there is none or it cannot be decoded.
  /// - Parameter key: the record's key.
  /// - Returns: the record.
  package func load(_ key: String) -> ResumableUpload? {
    guard let data = FileManager.default.contents(atPath: path(key)) else { return nil }
    return try? JSONDecoder().decode(ResumableUpload.self, from: data)
  }

  /// Saves a record durably (see the type's summary).
  /// - Parameters:
  ///   - record: the record.
  ///   - key: its key.
  /// - Throws: `StoreError` naming the file when it cannot be written.
  package func save(_ record: ResumableUpload, as key: String) throws {
    try PrivateFiles.prepareDirectory(directory.path, warn: PrivateFiles.warnOnStandardError)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let bytes = [UInt8](try encoder.encode(record))
    let target = path(key)
    let temporary = target + ".tmp"
    unlink(temporary)
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw failure("created", temporary) }
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return write(fd, base + written, buffer.count - written)
      }
      if count < 0 {
        if errno == EINTR { continue }
        let error = failure("written", temporary)
        close(fd)
        throw error
      }
      written += count
    }
    guard fsync(fd) == 0 else {
      let error = failure("flushed to disk", temporary)
      close(fd)
      throw error
    }
    close(fd)
    guard rename(temporary, target) == 0 else { throw failure("replaced", target) }
    let folder = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folder >= 0 {
      _ = fsync(folder)
      close(folder)
    }
  }

  /// Removes the record under `key`.
  /// - Parameter key: the key.
  package func remove(_ key: String) {
    unlink(path(key))
    let folder = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folder >= 0 {
      _ = fsync(folder)
      close(folder)
    }
  }

  private func path(_ key: String) -> String {
    directory.appendingPathComponent("\(key).json").path
  }

  private func failure(_ what: String, _ path: String) -> StoreError {
    let code = errno
    return StoreError(
      code == ENOSPC || code == EIO ? .io : .cannotCreate,
      "The upload's resume state \(path) could not be \(what).", path: path,
      underlying: String(cString: strerror(code)))
  }
}
