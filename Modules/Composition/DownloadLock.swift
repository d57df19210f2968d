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
enum DownloadLock {
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
  /// another call holds it.
  /// - Parameters:
  ///   - path: the lock file (its folder is made when missing).
  ///   - body: the download.
  /// - Returns: what `body` returned.
  /// - Throws: `CourierError` `fileUnavailable` when the lock file cannot be opened,
  ///   `cancelled` when the wait is cancelled, or what `body` threw.
  static func holding<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
    if let slash = path.lastIndex(of: "/") {
      try? FileManager.default.createDirectory(
        atPath: String(path[..<slash]), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    }
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw CourierError(
        .fileUnavailable, code: "download_lock_unavailable",
        serverMessage: "The file \(path) can't be opened (\(String(cString: strerror(errno)))).",
        context: path)
    }
    // Closing the descriptor releases the lock.
    defer { close(fd) }
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else {
        throw CourierError(
          .fileUnavailable, code: "download_lock_unavailable",
          serverMessage: "The file \(path) can't be locked (\(String(cString: strerror(errno)))).",
          context: path)
      }
      do {
        try await Task.sleep(for: .milliseconds(20))
      } catch {
        throw CourierError(.cancelled, context: path)
      }
    }
    return try await body()
  }
}
