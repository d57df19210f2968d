import CourierDomain
import Synchronization

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

/// An advisory lock (`flock`) on `sync.lock` in the data directory: one process at a time
/// replays a data directory's outbox, so two `courier sync` never send the same entries at
/// once. The file says who holds it (pid and what it does), for the other's message. The lock
/// is released by `release()`, or by the kernel when the process dies.
package final class SyncLock: Sendable {
  /// Who holds a lock, as its file says.
  package struct Holder: Sendable, Equatable {
    /// The holder's process id, when the file says.
    package var pid: Int32?
    /// What it is doing (`sync`, `sync --watch`, `articles add`...), when the file says.
    package var activity: String?

    /// Creates a holder.
    /// - Parameters:
    ///   - pid: the process id.
    ///   - activity: what it does.
    package init(pid: Int32?, activity: String?) {
      self.pid = pid
      self.activity = activity
    }

    /// "another courier (pid 12, running sync --watch)", for a message.
    package var description: String {
      var parts: [String] = []
      if let pid { parts.append("pid \(pid)") }
      if let activity { parts.append("running \(activity)") }
      return parts.isEmpty
        ? "another courier" : "another courier (\(parts.joined(separator: ", ")))"
    }
  }

  /// What `acquire` found.
  package enum Outcome: Sendable {
    /// This process holds the lock now.
    case acquired(SyncLock)
    /// Another process holds it.
    case held(by: Holder)
  }

  /// The lock file.
  package let path: String
  private let descriptor: Mutex<Int32>

  private init(path: String, descriptor: Int32) {
    self.path = path
    self.descriptor = Mutex(descriptor)
  }

  deinit { release() }

  /// Takes the lock without waiting.
  /// - Parameters:
  ///   - directory: the data directory (created, private, when missing).
  ///   - activity: what this process is about to do, for another's message.
  /// - Returns: the lock, or who holds it.
  /// - Throws: `StoreError` naming the file when it cannot be created or opened.
  package static func acquire(in directory: URL, activity: String) throws -> Outcome {
    try PrivateFiles.prepareDirectory(directory.path, warn: { _ in })
    let path = directory.appendingPathComponent("sync.lock").path
    let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let code = errno
      throw StoreError(
        code == EISDIR || code == ENOTDIR ? .cannotCreate : .io,
        "The sync lock \(path) could not be opened.", path: path,
        underlying: String(cString: strerror(code)))
    }
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      if code == EINTR { continue }
      let holder = Self.holder(fd)
      close(fd)
      if code == EWOULDBLOCK { return .held(by: holder) }
      throw StoreError(
        .io, "The sync lock \(path) could not be taken.", path: path,
        underlying: String(cString: strerror(code)))
    }
    let text = Array("\(getpid())\n\(activity)\n".utf8)
    if ftruncate(fd, 0) == 0 {
      _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }
    return .acquired(SyncLock(path: path, descriptor: fd))
  }

  /// Releases the lock (also done when the value is freed or the process ends).
  package func release() {
    descriptor.withLock { fd in
      guard fd >= 0 else { return }
      // LOCK_UN releases it even while a child being spawned holds a copy of the descriptor.
      _ = flock(fd, LOCK_UN)
      close(fd)
      fd = -1
    }
  }

  private static func holder(_ fd: Int32) -> Holder {
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return Holder(pid: nil, activity: nil) }
    let lines = String(decoding: buffer[0..<count], as: UTF8.self)
      .split(separator: "\n", omittingEmptySubsequences: true)
    return Holder(
      pid: lines.first.flatMap { Int32($0) },
      activity: lines.count > 1 ? String(lines[1]) : nil)
  }
}
