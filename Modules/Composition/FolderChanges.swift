import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Changes to the files of one folder, from inotify: how a running `watch()` learns that
/// another process wrote to the same data folder's outbox (a `courier articles add` while a
/// `courier sync --watch` holds the sync lock).
enum FolderChanges {
  /// A stream that yields once per batch of changes (a write, a file closed after writing,
  /// renamed or created in the folder) until the iteration stops. Finishes at once where inotify
  /// is not available or the folder cannot be watched: the watch then works as before.
  /// - Parameter path: the folder.
  /// - Returns: the stream.
  static func stream(_ path: String) -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    #if canImport(Glibc)
      let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
      var wake: [Int32] = [-1, -1]
      let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
      guard fd >= 0, pipe(&wake) == 0 else {
        if fd >= 0 { close(fd) }
        continuation.finish()
        return stream
      }
      guard inotify_add_watch(fd, path, mask) >= 0 else {
        for descriptor in [fd, wake[0], wake[1]] { close(descriptor) }
        continuation.finish()
        return stream
      }
      let (readWake, writeWake) = (wake[0], wake[1])
      continuation.onTermination = { _ in
        var byte: UInt8 = 1
        _ = write(writeWake, &byte, 1)
      }
      DetachedThread.start(name: "courier-folders") {
        defer {
          for descriptor in [fd, readWake, writeWake] { close(descriptor) }
          continuation.finish()
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
          var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: readWake, events: Int16(POLLIN), revents: 0),
          ]
          let ready = poll(&fds, 2, -1)
          if ready < 0 {
            if errno == EINTR { continue }
            return
          }
          if fds[1].revents != 0 { return }
          guard fds[0].revents != 0 else { continue }
          // Drain the batch; what changed does not matter, only that something did.
          while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
          continuation.yield()
        }
      }
    #else
      continuation.finish()
    #endif
    return stream
  }
}
