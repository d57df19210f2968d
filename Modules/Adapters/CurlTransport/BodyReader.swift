import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Feeds libcurl's read callback from a list of segments, copying each piece once, from memory
/// or with `pread` from its file straight into libcurl's buffer. Files are opened one at a time,
/// when their segment starts, and closed when it ends. Confined to the transport's thread.
final class BodyReader {
  private let segments: [BodySegment]
  private let context: String
  private var index = 0
  private var position: Int64 = 0
  private var fd: Int32 = -1
  /// Why reading stopped, when it failed; the transfer reports this instead of libcurl's code.
  private(set) var failure: CourierError?

  init(_ segments: [BodySegment], context: String) {
    self.segments = segments
    self.context = context
  }

  deinit { closeFile() }

  /// Fills `buffer` with the next bytes of the body.
  /// - Returns: the count written (0 at the end), or nil when a source failed.
  func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
    var filled = 0
    while filled < capacity, index < segments.count {
      let segment = segments[index]
      let remaining = segment.length - position
      if remaining <= 0 {
        advance()
        continue
      }
      let want = Int(min(Int64(capacity - filled), remaining))
      switch segment.contents {
      case .bytes(let data):
        data.withUnsafeBytes { raw in
          guard let base = raw.baseAddress else { return }
          (buffer + filled).copyMemory(from: base + Int(position), byteCount: want)
        }
        filled += want
        position += Int64(want)
      case .file(let url, let offset, _):
        let safe = Self.aliasingSafeCount(
          offset: offset + position, destination: buffer + filled, count: want)
        guard let got = readFile(url, at: offset + position, into: buffer + filled, count: safe)
        else { return nil }
        filled += got
        position += Int64(got)
        // A short buffer moves libcurl's next (whole-buffer) reads out of the slow phase.
        if safe < want { return filled }
      }
    }
    return filled
  }

  /// Moves to an absolute offset in the body, as libcurl asks when it must send it again.
  /// - Returns: false when the offset is past the end.
  func seek(to offset: Int64) -> Bool {
    var left = offset
    for (number, segment) in segments.enumerated() {
      if left < segment.length {
        if number != index { closeFile() }
        index = number
        position = left
        return true
      }
      left -= segment.length
    }
    guard left == 0 else { return false }
    closeFile()
    index = segments.count
    position = 0
    return true
  }

  /// Releases the open file, if any.
  func closeFile() {
    if fd >= 0 { Glibc.close(fd) }
    fd = -1
  }

  private func advance() {
    closeFile()
    index += 1
    position = 0
  }

  private func readFile(
    _ url: URL, at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int
  )
    -> Int?
  {
    if fd < 0 {
      fd = open(url.path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else {
        return fail(url, "can't be opened (\(String(cString: strerror(errno))))")
      }
    }
    while true {
      let got = pread(fd, buffer, count, off_t(offset))
      if got > 0 { return got }
      if got == 0 { return fail(url, "ended before the length announced for the body") }
      if errno == EINTR { continue }
      return fail(url, "can't be read (\(String(cString: strerror(errno))))")
    }
  }

  /// How many bytes to read at `offset` into `destination`, avoiding a slow copy.
  ///
  /// The kernel copies page-cache bytes to the buffer with `rep movsb`. When the file offset
  /// sits less than 64 bytes behind the destination address modulo 4 KiB, each load aliases a
  /// store just made ("4K aliasing") and the copy runs at about half speed: measured here, a
  /// whole body file sent at 0.5× the speed of the same bytes behind a 124-byte multipart head
  /// (Docs/benchmarks/curl-transport.md). Such a read is shortened by 128 bytes and the buffer
  /// handed back short: libcurl asks for whole buffers at the same address, so every later
  /// read starts out of that phase.
  /// - Parameters:
  ///   - offset: the file offset.
  ///   - destination: where the bytes go.
  ///   - count: how many bytes are wanted.
  /// - Returns: `count`, or `count - 128` in the slow phase (for reads over 4 KiB).
  static func aliasingSafeCount(offset: Int64, destination: UnsafeMutableRawPointer, count: Int)
    -> Int
  {
    let source = Int(offset & 4095)
    let target = Int(UInt(bitPattern: destination) & 4095)
    let behind = (target - source) & 4095
    guard behind > 0, behind < 64, count > 4096 else { return count }
    return count - 128
  }

  private func fail(_ url: URL, _ what: String) -> Int? {
    failure = CourierError(
      .fileUnavailable, serverMessage: "The file \(url.path) \(what).",
      underlying: "read callback: \(url.path) \(what)", context: context)
    return nil
  }

  /// The size of a file meant to be sent whole.
  /// - Returns: its size in bytes.
  /// - Throws: `fileUnavailable` naming the file when it is missing, unreadable or not a file.
  static func fileSize(_ url: URL, context: String) throws -> Int64 {
    var info = stat()
    guard stat(url.path, &info) == 0, access(url.path, R_OK) == 0 else {
      throw CourierError(
        .fileUnavailable,
        serverMessage: "The file \(url.path) can't be read (\(String(cString: strerror(errno)))).",
        context: context)
    }
    guard (info.st_mode & S_IFMT) == S_IFREG else {
      throw CourierError(
        .fileUnavailable, serverMessage: "\(url.path) isn't a regular file.", context: context)
    }
    return Int64(info.st_size)
  }

  /// Checks every file range before anything is sent, so a bad segment is reported by name and
  /// no partial body reaches the server.
  /// - Throws: `invalidInput` for a negative range, `fileUnavailable` naming the file when it is
  ///   missing or shorter than its range.
  static func validate(_ segments: [BodySegment], context: String) throws {
    for segment in segments {
      guard case .file(let url, let offset, let length) = segment.contents else { continue }
      guard offset >= 0, length >= 0 else {
        throw CourierError(
          .invalidInput,
          serverMessage: "The range \(offset)+\(length) of \(url.path) is negative.",
          context: context)
      }
      let size = try fileSize(url, context: context)
      guard offset + length <= size else {
        throw CourierError(
          .fileUnavailable,
          serverMessage:
            "The file \(url.path) has \(size) bytes, fewer than the range \(offset)+\(length).",
          context: context)
      }
    }
  }
}
