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

/// An open file descriptor, closed when released: the part of Foundation's `FileHandle` the
/// adapters and the core use (read, write, seek), without linking swift-corelibs-foundation
/// into every program (Docs/decisions/1414). Every call retries `EINTR`; a short read or write
/// is continued until the count is reached or the file ends.
package final class OpenFile {
  /// The descriptor; valid until `close()` or release.
  package let descriptor: Int32
  private var isOpen = true

  /// Takes ownership of a descriptor.
  /// - Parameter descriptor: an open descriptor, closed by this value from now on.
  package init(adopting descriptor: Int32) {
    self.descriptor = descriptor
  }

  /// Opens an existing file for reading.
  /// - Parameter path: the path.
  /// - Returns: the file.
  /// - Throws: `OpenFile.Failure` with the system's reason.
  package static func reading(_ path: String) throws(Failure) -> OpenFile {
    try open(path, flags: O_RDONLY)
  }

  /// Opens an existing file for writing, from its start, without truncating it.
  /// - Parameter path: the path.
  /// - Returns: the file.
  /// - Throws: `OpenFile.Failure` with the system's reason.
  package static func writing(_ path: String) throws(Failure) -> OpenFile {
    try open(path, flags: O_WRONLY)
  }

  /// Opens a file for writing, created (0600) when missing, cut to `offset` bytes and
  /// positioned there: what follows replaces anything after it.
  /// - Parameters:
  ///   - path: the path.
  ///   - offset: the length kept, and where the next write goes.
  /// - Returns: the file.
  /// - Throws: `OpenFile.Failure` with the system's reason.
  package static func writing(_ path: String, truncatingAt offset: Int64) throws(Failure)
    -> OpenFile
  {
    let file: OpenFile
    while true {
      let fd = systemOpen(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
      if fd >= 0 {
        file = OpenFile(adopting: fd)
        break
      }
      if errno != EINTR { throw Failure(operation: "open", code: errno) }
    }
    guard ftruncate(file.descriptor, off_t(offset)) == 0 else {
      throw Failure(operation: "truncate", code: errno)
    }
    try file.seek(toOffset: UInt64(offset))
    return file
  }

  /// Writes the file's data and size to the disk (`fsync`), so a rename after it cannot leave
  /// a name pointing at bytes a power cut lost.
  /// - Throws: `OpenFile.Failure` with the system's reason.
  package func synchronize() throws(Failure) {
    while fsync(descriptor) != 0 {
      if errno != EINTR { throw Failure(operation: "fsync", code: errno) }
    }
  }

  private static func open(_ path: String, flags: Int32) throws(Failure) -> OpenFile {
    while true {
      #if canImport(Glibc)
        let fd = Glibc.open(path, flags | O_CLOEXEC)
      #else
        let fd = Darwin.open(path, flags | O_CLOEXEC)
      #endif
      if fd >= 0 { return OpenFile(adopting: fd) }
      if errno != EINTR { throw Failure(operation: "open", code: errno) }
    }
  }

  deinit {
    if isOpen { _ = systemClose(descriptor) }
  }

  /// Reads until `count` bytes or the end of the file.
  /// - Parameter count: the most bytes to read.
  /// - Returns: the bytes, empty at the end of the file.
  /// - Throws: `OpenFile.Failure`.
  package func read(upToCount count: Int) throws(Failure) -> Data {
    guard count > 0 else { return Data() }
    var data = Data(count: count)
    var filled = 0
    let failure: Int32? = data.withUnsafeMutableBytes { buffer in
      guard let base = buffer.baseAddress else { return nil }
      while filled < count {
        let got = systemRead(descriptor, base + filled, count - filled)
        if got > 0 {
          filled += got
        } else if got == 0 {
          break
        } else if errno != EINTR {
          return errno
        }
      }
      return nil
    }
    if let failure { throw Failure(operation: "read", code: failure) }
    data.count = filled
    return data
  }

  /// Writes all of `data`.
  /// - Parameter data: the bytes.
  /// - Throws: `OpenFile.Failure`.
  package func write(contentsOf data: Data) throws(Failure) {
    let failure: Failure? = data.withUnsafeBytes { buffer in
      do throws(Failure) {
        try Self.writeAll(buffer, to: descriptor)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }

  /// Writes all of `bytes` to a descriptor this value does not own (standard output or error),
  /// continuing a short write and retrying `EINTR`.
  /// - Parameters:
  ///   - bytes: the bytes.
  ///   - descriptor: an open descriptor, left open.
  /// - Throws: `OpenFile.Failure` (a closed pipe, a full disk).
  package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32)
    throws(Failure)
  {
    guard var next = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let wrote = systemWrite(descriptor, next, left)
      if wrote > 0 {
        next += wrote
        left -= wrote
      } else if wrote < 0, errno != EINTR {
        throw Failure(operation: "write", code: errno)
      }
    }
  }

  /// Writes all of `text`'s UTF-8 to a descriptor this value does not own, giving up quietly on
  /// an error: for standard output and error, whose text has nowhere else to go.
  /// - Parameters:
  ///   - text: the text.
  ///   - descriptor: an open descriptor, left open.
  package static func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { try? writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
  }

  /// Moves to `offset` bytes from the start.
  /// - Parameter offset: the position.
  /// - Throws: `OpenFile.Failure`.
  package func seek(toOffset offset: UInt64) throws(Failure) {
    guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
      throw Failure(operation: "seek", code: errno)
    }
  }

  /// Moves to the end.
  /// - Returns: the file's size, the new position.
  /// - Throws: `OpenFile.Failure`.
  @discardableResult
  package func seekToEnd() throws(Failure) -> UInt64 {
    let end = lseek(descriptor, 0, SEEK_END)
    guard end >= 0 else { throw Failure(operation: "seek", code: errno) }
    return UInt64(end)
  }

  /// The current position.
  /// - Returns: bytes from the start.
  /// - Throws: `OpenFile.Failure`.
  package func offset() throws(Failure) -> UInt64 {
    let here = lseek(descriptor, 0, SEEK_CUR)
    guard here >= 0 else { throw Failure(operation: "seek", code: errno) }
    return UInt64(here)
  }

  /// Closes the descriptor now (release would close it too).
  package func close() {
    guard isOpen else { return }
    isOpen = false
    _ = systemClose(descriptor)
  }

  /// A system call that failed, and the system's reason.
  package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted: "open", "read", "write", "seek".
    package let operation: String
    /// The `errno` value.
    package let code: Int32

    /// A failure of `operation` with `errno` `code`.
    /// - Parameters:
    ///   - operation: what was attempted.
    ///   - code: the `errno` value.
    package init(operation: String, code: Int32) {
      self.operation = operation
      self.code = code
    }

    /// "read failed: Input/output error".
    package var description: String {
      "\(operation) failed: \(String(cString: strerror(code)))"
    }
  }
}

// The C calls under names that the methods above do not shadow.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  read(fd, buffer, count)
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, buffer, count)
}

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  open(path, flags, mode)
}

private func systemClose(_ fd: Int32) -> Int32 {
  close(fd)
}
