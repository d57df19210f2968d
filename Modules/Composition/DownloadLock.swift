import CourierCore
import CourierDomain

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

/// One download of a URL into one destination at a time (decision 2517): an advisory lock
/// (`flock`) on `<data>/downloads/.locks/<sha256(url + destination)>.lock` (the name of the
/// download's sidecar), held from the cache check to the admission. Each holder opens the file
/// itself, so two calls in one process exclude each other as two processes do; the kernel drops
/// the lock when its holder dies. Whoever comes second finds the file the first kept and
/// revalidates it (a conditional HEAD, no body) instead of writing the same partial file.
///
/// The holder removes the file before it lets go, so the folder does not keep a file for every
/// photo ever fetched (decision 2519). A waiter that then gets the lock holds a file no longer
/// at the path, which excludes nobody who opens the path now: it checks that the path still
/// names the file it locked, and starts again when not.
package enum DownloadLock {
  /// The lock file of `url` into `destination`.
  /// - Parameters:
  ///   - url: the URL.
  ///   - destination: where the file goes.
  ///   - directory: the locks' folder.
  /// - Returns: its path.
  static func path(_ url: URL, _ destination: URL, in directory: URL) -> String {
    directory.appendingPathComponent(Downloader.stateKey(url, destination) + ".lock").path
  }

  /// Runs `body` holding the lock at `path`, waiting (a check every 20 ms, cancellable) while
  /// another call holds it. The file is removed when `body` returns or throws.
  /// - Parameters:
  ///   - path: the lock file (its folder is made when missing).
  ///   - body: the download.
  /// - Returns: what `body` returned.
  /// - Throws: `CourierError` `fileUnavailable` when the lock file cannot be opened,
  ///   `cancelled` when the wait is cancelled, or what `body` threw.
  package static func holding<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
    if let slash = path.lastIndex(of: "/") {
      try? FileManager.default.createDirectory(
        atPath: String(path[..<slash]), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    }
    let fd = try await acquire(path)
    // Removed while held, then closed (which releases the lock): a waiter on this file finds
    // the path gone or naming another file, and opens it again.
    defer {
      unlink(path)
      close(fd)
    }
    return try await body()
  }

  /// Opens and locks the file at `path`, again as long as the file locked is no longer the one
  /// the path names (its holder removed it meanwhile).
  private static func acquire(_ path: String) async throws -> Int32 {
    while true {
      let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
      guard fd >= 0 else { throw failure("opened", path) }
      do {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
          guard errno == EWOULDBLOCK || errno == EINTR else { throw failure("locked", path) }
          do {
            try await Task.sleep(for: .milliseconds(20))
          } catch {
            throw CourierError(.cancelled, context: path)
          }
        }
      } catch {
        close(fd)
        throw error
      }
      if names(path, fd) { return fd }
      close(fd)
    }
  }

  /// Whether `path` names the file open at `fd`.
  private static func names(_ path: String, _ fd: Int32) -> Bool {
    var held = stat()
    var named = stat()
    guard fstat(fd, &held) == 0, stat(path, &named) == 0 else { return false }
    return held.st_dev == named.st_dev && held.st_ino == named.st_ino
  }

  private static func failure(_ what: String, _ path: String) -> CourierError {
    CourierError(
      .fileUnavailable, code: "download_lock_unavailable",
      serverMessage: "The file \(path) can't be \(what) (\(String(cString: strerror(errno)))).",
      context: path)
  }
}
