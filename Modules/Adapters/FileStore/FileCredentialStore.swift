import CourierDomain
import CourierPorts
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

/// Keeps the session's tokens in a JSON file readable by its owner only (mode 0600), replaced
/// atomically so a crash never leaves half a token. The temporary file is created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW`: a symlink planted at its path never receives the tokens.
///
/// A file whose content is not a usable session (empty, not JSON, wrong types, an expiry that
/// is not a real date) is "no session": `load()` returns nil and `unusableReason` says why, so
/// a request goes out unauthenticated and comes back 401 (writes stay pending) rather than
/// failing locally. Only I/O failures throw. Expiry dates are clamped when written, so the
/// store never writes a date it cannot read back. A session file that group or others may
/// read is tightened to 0600, with a warning (decision 0405).
///
/// `load()` runs before every request. It decodes the file again only when a `stat` says the
/// file changed (device, inode, size, modification and change times): another process's
/// `login` or refresh replaces the file (a new inode) and is seen at the next request, without
/// re-reading and decoding it for every request of a replay.
package struct FileCredentialStore: CredentialStore {
  /// The JSON file holding the session (mode 0600 in the private data directory).
  package let file: URL
  private let cache = Cache()
  private let warn: (@Sendable (String) -> Void)?

  /// The earliest expiry written: the Unix epoch (an expiry in the past means "expired").
  package static let earliestExpiry = Date(timeIntervalSince1970: 0)
  /// The latest expiry written: 9999-12-31T23:59:59Z, the last instant ISO 8601 can say in
  /// four digits.
  package static let latestExpiry = Date(timeIntervalSince1970: 253_402_300_799)

  /// Creates a store.
  /// - Parameters:
  ///   - file: the file (its directory is created when needed, mode 0700).
  ///   - warn: told when the file's permissions had to be tightened; nil to stay quiet.
  package init(file: URL, warn: (@Sendable (String) -> Void)? = nil) {
    self.file = file
    self.warn = warn
  }

  /// Why the last `load()` found no usable session although the file exists (nil when it was
  /// usable, or absent): a sentence naming the file, for the "log in again" message.
  package var unusableReason: String? { cache.problem.withLock { $0 } }

  /// What `stat` says of the file: any change of it means the file must be read again.
  struct Identity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    /// Modification and change times, in nanoseconds.
    var modified: Int64
    var changed: Int64

    init?(path: String) {
      var info = stat()
      guard stat(path, &info) == 0 else { return nil }
      #if canImport(Darwin)
        let (mtime, ctime) = (info.st_mtimespec, info.st_ctimespec)
      #else
        let (mtime, ctime) = (info.st_mtim, info.st_ctim)
      #endif
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
      size = Int64(info.st_size)
      modified = Int64(mtime.tv_sec) * 1_000_000_000 + Int64(mtime.tv_nsec)
      changed = Int64(ctime.tv_sec) * 1_000_000_000 + Int64(ctime.tv_nsec)
    }
  }

  /// The last tokens read, with the identity of the file they were read from.
  final class Cache: Sendable {
    private let entry = Mutex<(identity: Identity, credentials: Credentials)?>(nil)
    /// Why the last load found no usable session in an existing file.
    let problem = Mutex<String?>(nil)

    func credentials(for identity: Identity) -> Credentials? {
      entry.withLock { $0?.identity == identity ? $0?.credentials : nil }
    }

    func remember(_ credentials: Credentials?, for identity: Identity?) {
      entry.withLock { entry in
        if let credentials, let identity {
          entry = (identity, credentials)
        } else {
          entry = nil
        }
      }
    }
  }

  /// Loads the tokens.
  /// - Returns: them, or nil when there is no file or its content is not a usable session
  ///   (`unusableReason` then says why).
  /// - Throws: `StoreError` (`io`) naming the file when it exists but cannot be read.
  package func load() throws -> Credentials? {
    guard let before = Identity(path: file.path) else {
      cache.remember(nil, for: nil)
      cache.problem.withLock { $0 = nil }
      return nil
    }
    if let cached = cache.credentials(for: before) { return cached }
    let data = try readPrivately()
    guard let credentials = decode(data) else {
      cache.remember(nil, for: nil)
      return nil
    }
    cache.problem.withLock { $0 = nil }
    // Kept only when the file did not change while it was read.
    if let after = Identity(path: file.path), after == before {
      cache.remember(credentials, for: after)
    }
    return credentials
  }

  /// Reads the file without following a symlink, tightening loose permissions first.
  private func readPrivately() throws -> Data {
    // O_NONBLOCK: a FIFO planted at the path must not block the open (no writer would come);
    // it is refused below, as is anything that is not a regular file.
    let fd = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { throw failure("read", errno) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw failure("read", errno) }
    guard (info.st_mode & S_IFMT) == S_IFREG else { throw failure("read", EINVAL) }
    if (info.st_mode & 0o077) != 0 {
      let mode = String(info.st_mode & 0o777, radix: 8)
      if fchmod(fd, 0o600) == 0 {
        warn?(
          "the session file \(file.path) could be read by other users (mode \(mode)); it was "
            + "made private (0600). Log in again if you think someone else read it.")
      } else {
        warn?(
          "the session file \(file.path) can be read by other users (mode \(mode)) and could "
            + "not be made private: \(String(cString: strerror(errno))).")
      }
    }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw failure("read", errno)
      }
      if count == 0 { break }
      data.append(contentsOf: buffer[0..<count])
      if data.count > 1 << 20 { break }  // not a session; decoding will say so
    }
    return data
  }

  /// Decodes a session, or records why it is not one.
  private func decode(_ data: Data) -> Credentials? {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let reason: String
    do {
      let credentials = try decoder.decode(Credentials.self, from: data)
      if credentials.accessToken.isEmpty {
        reason = "it holds no access token"
      } else if let expiry = credentials.expiresAt,
        !(Self.earliestExpiry...Self.latestExpiry).contains(expiry)
      {
        reason = "its expiry date is not a real date"
      } else {
        return credentials
      }
    } catch {
      reason = data.isEmpty ? "it is empty" : "it is not a session Courier can read"
    }
    cache.problem.withLock {
      $0 = "The saved session \(file.path) couldn't be used (\(reason)); log in again."
    }
    return nil
  }

  private func failure(_ what: String, _ code: Int32, path: String? = nil) -> StoreError {
    let path = path ?? file.path
    return StoreError(
      [ENOENT, ENOTDIR, EISDIR, ELOOP].contains(code) && what != "read" ? .cannotCreate : .io,
      "The session file \(path) could not be \(what).", path: path,
      underlying: String(cString: strerror(code)))
  }

  /// An expiry the store can write and read back: not a number → none; before the epoch or
  /// after year 9999 (infinities included) → clamped (a token that expired long ago is simply
  /// expired).
  /// - Parameter date: the expiry.
  /// - Returns: the expiry to write.
  package static func writableExpiry(_ date: Date?) -> Date? {
    guard let date, !date.timeIntervalSince1970.isNaN else { return nil }
    return min(max(date, earliestExpiry), latestExpiry)
  }

  /// Saves the tokens, mode 0600, atomically: a temporary file created exclusively (never
  /// through a symlink), synced, then renamed over the session file.
  /// - Parameter credentials: the tokens.
  /// - Throws: `StoreError` naming the file when it cannot be written.
  package func save(_ credentials: Credentials) throws {
    let directory = file.deletingLastPathComponent()
    do {
      try FileManager.default.createDirectory(
        at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw StoreError(
        .cannotCreate, "The folder of the session file \(file.path) could not be created.",
        path: directory.path, underlying: "\(error)")
    }
    var credentials = credentials
    credentials.expiresAt = Self.writableExpiry(credentials.expiresAt)
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(credentials)
    let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(getpid()).tmp")
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
    // Created with 0600 from the start: the token is never readable by others, even briefly.
    var fd = open(temporary.path, flags, 0o600)
    if fd < 0 && errno == EEXIST {
      // A leftover of a crashed save, or something planted: remove the name (a symlink itself,
      // never its target) and create it afresh, exclusively.
      unlink(temporary.path)
      fd = open(temporary.path, flags, 0o600)
    }
    guard fd >= 0 else { throw failure("created", errno, path: temporary.path) }
    _ = fchmod(fd, 0o600)
    let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    let writeError = errno
    let synced = fsync(fd)
    close(fd)
    guard written == data.count, synced == 0 else {
      unlink(temporary.path)
      throw failure("written", written < 0 ? writeError : ENOSPC, path: temporary.path)
    }
    guard rename(temporary.path, file.path) == 0 else {
      let code = errno
      unlink(temporary.path)
      throw failure("replaced", code)
    }
    let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directoryFD >= 0 {
      _ = fsync(directoryFD)
      close(directoryFD)
    }
  }

  /// Removes the file.
  /// - Throws: when it exists and cannot be removed.
  package func clear() throws {
    if FileManager.default.fileExists(atPath: file.path) {
      try FileManager.default.removeItem(at: file)
    }
  }
}
