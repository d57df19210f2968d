import CDetachedRemoval
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

/// Queued uploads' files in `<data dir>/queued-uploads/` (decision 1302), private to the user
/// (folder 0700, files 0600, decision 0405): `<id>.body` (the bytes to send), `<id>.json` (the
/// tus resume record, `FileResumableUploadStore`), `<id>.delivered` (the server's proof,
/// until the entry is gone) and, for a moment, `<id>.sent` (delivered bytes being removed by a detached process,
/// when `removal` is `.detachedProcess`).
///
/// Crash discipline: `keep` copies the bytes, fsyncs the file and the folder, and only then
/// commits the entry, holding a shared `flock` on `.lock` throughout; `sweep` takes it
/// exclusively (or skips), reads the live entries and removes every other upload's files. A
/// process killed before its entry was committed leaves bytes that the next sweep removes;
/// one killed after leaves both.
package struct FileQueuedUploadStore: QueuedUploadStore {
  /// The folder.
  package let directory: URL
  /// The test-only point (`COURIER_TEST_STOP_AT`) at which `keep` stops its own process with
  /// `SIGSTOP`: `queued-upload-written` (bytes durable, entry not committed) or
  /// `queued-upload-committed` (both durable), so a test can kill it exactly there.
  package let stopAt: String?
  /// The tus resume records, in the same folder.
  package let resumeRecords: any ResumableUploadStore
  /// Who removes a delivered upload's bytes: this process (the default) or, when the caller
  /// opts in, a detached child process.
  package let removal: DeliveredBodyRemoval

  /// A store in `directory` (created on the first `keep`).
  /// - Parameters:
  ///   - directory: the folder, e.g. `<data dir>/queued-uploads`.
  ///   - stopAt: the test-only stop point; nil in production.
  ///   - removal: who removes a delivered upload's bytes; `.inProcess` unless the caller
  ///     owns its process and opts in to `.detachedProcess`.
  package init(
    directory: URL, stopAt: String? = nil, removal: DeliveredBodyRemoval = .inProcess
  ) {
    self.directory = directory
    self.stopAt = stopAt
    self.removal = removal
    resumeRecords = FileResumableUploadStore(directory: directory)
  }

  /// Copies `source` to `<id>.body` durably, then commits (see the type's summary).
  /// - Parameters:
  ///   - source: the bytes to send.
  ///   - id: the upload's id.
  ///   - commit: records the outbox entry.
  /// - Returns: what `commit` returned.
  /// - Throws: `StoreError` naming the file when the copy cannot be made, or what `commit`
  ///   threw; nothing is left behind then.
  package func keep<T>(_ source: URL, as id: String, commit: () throws -> T) throws -> T {
    try PrivateFiles.prepareDirectory(directory.path, warn: PrivateFiles.warnOnStandardError)
    let lock = try openLock()
    defer { close(lock) }
    while flock(lock, LOCK_SH) != 0 {
      guard errno == EINTR else { throw failure("locked", lockPath) }
    }
    let target = body(id).path
    do {
      try copy(source.path, to: target)
    } catch {
      unlink(target)
      throw error
    }
    syncFolder()
    stop(at: "queued-upload-written")
    let result: T
    do {
      result = try commit()
    } catch {
      unlink(target)
      syncFolder()
      throw error
    }
    stop(at: "queued-upload-committed")
    return result
  }

  /// `<id>.body` in the folder.
  /// - Parameter id: the upload's id.
  /// - Returns: its URL.
  package func body(_ id: String) -> URL { file(id, "body") }

  /// Writes `<id>.delivered` durably, then removes the bytes and the resume record. With
  /// `removal` `.inProcess` (the default) the bytes are unlinked here. With `.detachedProcess`
  /// they are renamed `<id>.sent` at once and their blocks freed off the caller's path
  /// (decision 1303): freeing a gigabyte's blocks takes the file system a quarter of a second,
  /// which was most of the gap between a queued upload's `courier sync` and a plain upload.
  /// A short-lived grandchild process unlinks the file; should it not, the next sweep removes
  /// it (the name is the upload's).
  /// - Parameter id: the upload's id.
  /// - Throws: `StoreError` when the proof cannot be written (nothing is removed then).
  package func markDelivered(_ id: String) throws {
    let path = file(id, "delivered").path
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw failure("created", path) }
    let text = Array("delivered\n".utf8)
    let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == text.count, fsync(fd) == 0 else {
      let error = failure("written", path)
      close(fd)
      unlink(path)
      throw error
    }
    close(fd)
    syncFolder()
    let sent = file(id, "sent").path
    if removal == .detachedProcess && rename(body(id).path, sent) == 0 {
      Self.removeDetached(sent)
    } else {
      unlink(body(id).path)
    }
    resumeRecords.remove(id)
    syncFolder()
  }

  /// Unlinks `path` in a grandchild process, so the file system's work of freeing its blocks
  /// runs beside the caller instead of in its path; in this process when that cannot be done
  /// (no `_Fork` in this C library, or it failed). The forks and what the processes do
  /// between fork and `_exit` are in C (`CDetachedRemoval`: async-signal-safe calls only,
  /// every signal blocked, no `pthread_atfork` handler run). The grandchild closes every
  /// descriptor up to the highest open now (and a margin for any another thread opens
  /// meanwhile), so it holds none of this process's locks, sockets or pipes while it works:
  /// a `flock` would outlive its holder, and whoever reads this process's output to its end
  /// would wait for the grandchild too.
  static func removeDetached(_ path: String) {
    let highest = highestDescriptor() + 64
    if courier_unlink_detached(path, highest) != 0 { unlink(path) }
  }

  /// The highest file descriptor this process has open (`/proc/self/fd`); 1024 when that
  /// cannot be read.
  static func highestDescriptor() -> Int32 {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap { Int32($0) }.max() ?? 1024
  }

  /// Writes `<id>.<kind>` through a temporary file, flushed and renamed, so a reader finds the
  /// whole text or none.
  /// - Parameters:
  ///   - text: the text.
  ///   - kind: `part` or `ref`.
  ///   - id: the upload's id.
  /// - Throws: `StoreError` when it cannot be written (nothing is left then).
  package func writeNote(_ text: String, _ kind: String, for id: String) throws {
    let target = file(id, kind).path
    let path = target + ".tmp"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw failure("created", path) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count, fsync(fd) == 0, rename(path, target) == 0 else {
      let error = failure("written", path)
      close(fd)
      unlink(path)
      throw error
    }
    close(fd)
    syncFolder()
  }

  /// The text of `<id>.<kind>`, nil when there is none.
  /// - Parameters:
  ///   - kind: `part` or `ref`.
  ///   - id: the upload's id.
  /// - Returns: the text.
  package func note(_ kind: String, for id: String) -> String? {
    guard let data = FileManager.default.contents(atPath: file(id, kind).path) else { return nil }
    return String(decoding: data, as: UTF8.self)
  }

  /// Whether `<id>.delivered` exists.
  /// - Parameter id: the upload's id.
  /// - Returns: true once the server proved it stored the upload.
  package func isDelivered(_ id: String) -> Bool {
    access(file(id, "delivered").path, F_OK) == 0
  }

  /// Removes the files of every upload `live` does not name, unless a `keep` runs (then it
  /// does nothing: the next sweep will).
  /// - Parameter live: the ids the outbox names, read while the sweep holds the lock.
  /// - Returns: the ids whose files were removed.
  @discardableResult
  package func sweep(keeping live: () throws -> Set<String>) -> [String] {
    var info = stat()
    // FileURLPath, not `URL.path`: a store that was never used costs an open one `stat`.
    guard stat(FileURLPath.of(directory), &info) == 0, let lock = try? openLock() else {
      return []
    }
    defer { close(lock) }
    guard flock(lock, LOCK_EX | LOCK_NB) == 0,
      let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path),
      let live = try? live()
    else { return [] }
    var removed = Set<String>()
    for name in names {
      guard let id = Self.uploadID(ofFile: name), !live.contains(id) else { continue }
      if unlink(directory.appendingPathComponent(name).path) == 0 { removed.insert(id) }
    }
    if !removed.isEmpty { syncFolder() }
    return removed.sorted()
  }

  /// The upload id a file of the folder belongs to: `<uuid>.body`, `.json`, `.json.tmp`,
  /// `.delivered`, `.sent`, an attachment's `.part` and `.ref` (and their `.tmp`); nil for any
  /// other name (never removed).
  static func uploadID(ofFile name: String) -> String? {
    let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
    guard parts.count == 2, UUID(uuidString: parts[0]) != nil,
      [
        "body", "json", "json.tmp", "delivered", "sent", "part", "part.tmp", "ref", "ref.tmp",
      ].contains(parts[1])
    else { return nil }
    return parts[0]
  }

  // MARK: - Files

  private var lockPath: String { directory.appendingPathComponent(".lock").path }

  private func file(_ id: String, _ suffix: String) -> URL {
    directory.appendingPathComponent("\(id).\(suffix)")
  }

  private func openLock() throws -> Int32 {
    let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw failure("opened", lockPath) }
    return fd
  }

  private func copy(_ source: String, to target: String) throws {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw failure("read", source) }
    defer { close(input) }
    let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard output >= 0 else { throw failure("created", target) }
    defer { close(output) }
    let size = 1 << 20
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let count = read(input, buffer, size)
      if count < 0 {
        if errno == EINTR { continue }
        throw failure("read", source)
      }
      if count == 0 { break }
      var done = 0
      while done < count {
        let written = write(output, buffer + done, count - done)
        if written < 0 {
          if errno == EINTR { continue }
          throw failure("written", target)
        }
        done += written
      }
    }
    guard fsync(output) == 0 else { throw failure("flushed to disk", target) }
  }

  private func syncFolder() {
    let folder = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folder >= 0 {
      _ = fsync(folder)
      close(folder)
    }
  }

  private func stop(at point: String) {
    if stopAt == point { raise(SIGSTOP) }
  }

  private func failure(_ what: String, _ path: String) -> StoreError {
    let code = errno
    return StoreError(
      code == ENOSPC || code == EIO ? .io : .cannotCreate,
      "The queued upload's file \(path) could not be \(what).", path: path,
      underlying: String(cString: strerror(code)))
  }
}
