import CourierDomain
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

/// The portable `FileHasher`: Domain's pure-Swift `SHA256` over the range, read 1 MiB at a
/// time. The default wherever nothing faster is chosen (about 250 MB/s in a release build on
/// the machines of Docs/benchmarks/resumable-upload.md), and the reference every other adapter
/// is compared with.
package struct SwiftFileHasher: FileHasher {
  /// Creates the hasher.
  package init() {}

  /// The SHA-256 of a range of a file (see `FileHasher`).
  /// - Parameters:
  ///   - file: the file.
  ///   - offset: the first byte.
  ///   - length: how many bytes.
  /// - Returns: the digest.
  /// - Throws: `CourierError` (`fileUnavailable`, `cancelled`).
  package func sha256(of file: URL, offset: Int64, length: Int64) throws -> [UInt8] {
    var hasher = SHA256()
    try Self.read(file, offset: offset, length: length) { hasher.update($0) }
    return hasher.finalize()
  }

  /// Reads `length` bytes of `file` from `offset`, 1 MiB at a time, into `consume`: the
  /// reading part every `FileHasher` of this package shares.
  /// - Throws: `CourierError` `fileUnavailable` (`file_changed` when the file ends first),
  ///   `cancelled`.
  package static func read(
    _ file: URL, offset: Int64, length: Int64,
    _ consume: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    guard offset >= 0, length >= 0 else {
      throw CourierError(.invalidInput, underlying: "negative file range", context: file.path)
    }
    let reader = try FileRangeReader(file)
    try reader.read(offset: offset, length: length, consume)
  }
}

/// An open regular file and one 1 MiB buffer, for reading ranges of it again and again without
/// opening it or allocating each time (a download's digest thread reads each MiB just written:
/// decision 2508). Not thread-safe: one thread uses it.
package final class FileRangeReader {
  private let file: URL
  private let fd: Int32
  private let buffer: UnsafeMutableRawPointer
  private static let size = 1 << 20

  /// Opens the file.
  /// - Parameter file: a regular file.
  /// - Throws: `CourierError` `fileUnavailable` when it can't be opened or is not a regular file.
  package init(_ file: URL) throws {
    // O_NONBLOCK: a path swapped for a FIFO cannot block the open; fstat refuses anything
    // but a regular file.
    let fd = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      throw CourierError(
        .fileUnavailable, code: "file_unavailable",
        serverMessage: "The file \(file.lastPathComponent) can't be opened.",
        underlying: String(cString: strerror(errno)), context: file.path)
    }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      close(fd)
      throw CourierError(
        .fileUnavailable, code: "file_unavailable",
        serverMessage: "The file \(file.lastPathComponent) is not a regular file.",
        context: file.path)
    }
    self.file = file
    self.fd = fd
    buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.size, alignment: 64)
  }

  deinit {
    buffer.deallocate()
    close(fd)
  }

  /// Reads `length` bytes from `offset` into `consume`, 1 MiB at a time.
  /// - Throws: `CourierError` `fileUnavailable` (`file_changed` when the file ends first),
  ///   `cancelled`, or what `consume` throws.
  package func read(
    offset: Int64, length: Int64, _ consume: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    var position = offset
    var remaining = length
    while remaining > 0 {
      if Task.isCancelled { throw CourierError(.cancelled, context: file.path) }
      let count = pread(fd, buffer, Int(min(remaining, Int64(Self.size))), off_t(position))
      if count < 0 {
        if errno == EINTR { continue }
        throw CourierError(
          .fileUnavailable, code: "file_unavailable",
          serverMessage: "The file \(file.lastPathComponent) can't be read.",
          underlying: String(cString: strerror(errno)), context: file.path)
      }
      guard count > 0 else {
        throw CourierError(
          .fileUnavailable, code: "file_changed",
          serverMessage:
            "The file \(file.lastPathComponent) got shorter while it was being sent.",
          context: file.path)
      }
      try consume(UnsafeRawBufferPointer(start: buffer, count: count))
      position += Int64(count)
      remaining -= Int64(count)
    }
  }
}
