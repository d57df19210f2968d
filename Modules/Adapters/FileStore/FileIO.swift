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

/// The few POSIX calls the file store needs, each failure turned into a `StoreError` naming
/// the file.
enum FileIO {
  static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> StoreError {
    // A part of the path that is a file, or a folder where a file should be: nothing can be
    // created there. Anything else (read-only, full, I/O error) is an I/O failure.
    let cannotCreate = [ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG].contains(code)
    return StoreError(
      cannotCreate ? .cannotCreate : .io, "The local store file \(path) could not be \(what).",
      path: path, underlying: String(cString: strerror(code)))
  }

  static func open(_ path: String, _ flags: Int32, what: String) throws(StoreError) -> Int32 {
    let fd = Glibc.open(path, flags | O_CLOEXEC, 0o600)
    if fd < 0 { throw failure(what, path) }
    return fd
  }

  static func makeDirectory(_ path: String) throws(StoreError) {
    var prefix = ""
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
      prefix += "/" + part
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        let code = errno
        throw StoreError(
          code == ENOSPC || code == EIO ? .io : .cannotCreate,
          "The local store folder \(path) could not be created (\(prefix)).", path: prefix,
          underlying: String(cString: strerror(code)))
      }
    }
    var info = stat()
    if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR {
      throw StoreError(
        .cannotCreate, "The local store folder \(path) is a file, not a folder.", path: path)
    }
  }

  static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

  static func readAll(_ path: String) throws(StoreError) -> [UInt8] {
    let fd = try open(path, O_RDONLY, what: "opened")
    defer { Glibc.close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw failure("read", path)
      }
      if count == 0 { break }
      bytes += buffer[0..<count]
    }
    return bytes
  }

  static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(StoreError) {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes {
        Glibc.write(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset)
      }
      if count < 0 {
        if errno == EINTR { continue }
        throw failure("written", path)
      }
      offset += count
    }
  }

  static func dataSync(_ fd: Int32, path: String) throws(StoreError) {
    if fdatasync(fd) != 0 { throw failure("flushed to disk", path) }
  }

  static func syncDirectory(_ directory: String) throws(StoreError) {
    let fd = try open(directory, O_RDONLY | O_DIRECTORY, what: "opened")
    defer { Glibc.close(fd) }
    if fsync(fd) != 0 { throw failure("flushed to disk", directory) }
  }

  /// Replaces a file atomically and durably: a temporary file is written and synced, renamed
  /// over the target, then the directory is synced. A crash leaves the old or the new file.
  static func replace(_ path: String, with bytes: [UInt8], directory: String) throws(StoreError) {
    let temporary = path + ".tmp"
    // Never through a symlink, never into a file that was there: a leftover (or something
    // planted) is removed by name first and the file created exclusively.
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
    unlink(temporary)
    let fd = try open(temporary, flags, what: "created")
    do throws(StoreError) {
      try writeAll(fd, bytes, path: temporary)
      if fsync(fd) != 0 { throw failure("flushed to disk", temporary) }
    } catch {
      Glibc.close(fd)
      throw error
    }
    Glibc.close(fd)
    if rename(temporary, path) != 0 { throw failure("replaced", path) }
    try syncDirectory(directory)
  }

  static func size(_ fd: Int32) -> Int {
    var info = stat()
    return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
  }
}
