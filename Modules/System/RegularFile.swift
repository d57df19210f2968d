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

/// Input files that must be regular files: checked with `stat` before anything opens them, and
/// opened without blocking.
///
/// Opening a FIFO with no writer blocks until one appears (and ignores SIGINT while it waits
/// in the kernel); `/dev/zero` and other devices report a size of 0 or never end; a socket
/// cannot be opened at all. None of them is a file a person means to upload or configure with.
package enum RegularFile {
  /// Why a path can't be read as a regular file, or nil when it can. Symbolic links are
  /// followed: a link to a regular file is fine, a link to `/dev/zero` is not.
  /// - Parameter path: the path.
  /// - Returns: a sentence's end for a person ("is a pipe (FIFO), not a regular file"), or nil.
  package static func problem(atPath path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return describe(errno: errno) }
    if let kind = unusableKind(mode: info.st_mode) { return kind }
    guard access(path, R_OK) == 0 else { return describe(errno: errno) }
    return nil
  }

  /// Opens a regular file for reading. The open uses `O_NONBLOCK`, so a path swapped for a
  /// FIFO after a check cannot block, and `fstat` confirms what was opened.
  /// - Parameter path: the path.
  /// - Returns: a handle that closes its descriptor when released.
  /// - Throws: `RegularFile.Problem` with a sentence's end for a person.
  package static func openForReading(atPath path: String) throws -> OpenFile {
    if let why = problem(atPath: path) { throw Problem(why: why) }
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw Problem(why: describe(errno: errno)) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      let why = describe(errno: errno)
      close(fd)
      throw Problem(why: why)
    }
    if let kind = unusableKind(mode: info.st_mode) {
      close(fd)
      throw Problem(why: kind)
    }
    // Reads of a regular file never block on O_NONBLOCK; clear it anyway for later readers.
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    return OpenFile(adopting: fd)
  }

  /// Reads a whole regular file, refusing anything else and anything larger than a bound.
  /// - Parameters:
  ///   - path: the path.
  ///   - maxBytes: the largest size accepted.
  /// - Returns: the contents.
  /// - Throws: `RegularFile.Problem`.
  package static func read(atPath path: String, maxBytes: Int) throws -> Data {
    let handle = try openForReading(atPath: path)
    do {
      let data = try handle.read(upToCount: maxBytes + 1)
      guard data.count <= maxBytes else {
        throw Problem(why: "is larger than \(maxBytes) bytes")
      }
      return data
    } catch let problem as Problem {
      throw problem
    } catch {
      throw Problem(why: "can't be read (\(error))")
    }
  }

  /// Why a file can't be used, as the end of a sentence that starts with its name.
  package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
    /// "is a pipe (FIFO), not a regular file", "doesn't exist"...
    package var why: String
    /// Creates a problem.
    /// - Parameter why: the sentence's end.
    package init(why: String) { self.why = why }
    /// The sentence's end.
    package var description: String { why }
  }

  static func unusableKind(mode: mode_t) -> String? {
    switch mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: return "is a folder, not a file"
    case S_IFIFO: return "is a pipe (FIFO), not a regular file"
    case S_IFCHR, S_IFBLK: return "is a device, not a regular file"
    case S_IFSOCK: return "is a socket, not a regular file"
    default: return "is not a regular file"
    }
  }

  static func describe(errno code: Int32) -> String {
    switch code {
    case ENOENT, ENOTDIR: return "doesn't exist"
    case EACCES, EPERM: return "can't be read (check its permissions)"
    default: return "can't be read (\(String(cString: strerror(code))))"
    }
  }
}
