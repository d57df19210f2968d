import CourierPorts
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps the session's tokens in a JSON file readable by its owner only (mode 0600), replaced
/// atomically so a crash never leaves half a token.
///
/// `load()` runs before every request. It decodes the file again only when a `stat` says the
/// file changed (device, inode, size, modification and change times): another process's
/// `login` or refresh replaces the file (a new inode) and is seen at the next request, without
/// re-reading and decoding it for every request of a replay.
public struct FileCredentialStore: CredentialStore {
  /// The file.
  public let file: URL
  private let cache = Cache()

  /// Creates a store.
  /// - Parameter file: the file (its directory is created when needed, mode 0700).
  public init(file: URL) { self.file = file }

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
  /// - Returns: them, or nil when there is no file.
  /// - Throws: `CocoaError` when the file exists but cannot be read or decoded.
  public func load() throws -> Credentials? {
    guard let before = Identity(path: file.path) else {
      cache.remember(nil, for: nil)
      return nil
    }
    if let cached = cache.credentials(for: before) { return cached }
    let data = try Data(contentsOf: file)
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let credentials = try decoder.decode(Credentials.self, from: data)
    // Kept only when the file did not change while it was read.
    if let after = Identity(path: file.path), after == before {
      cache.remember(credentials, for: after)
    }
    return credentials
  }

  /// Saves the tokens, mode 0600, atomically.
  /// - Parameter credentials: the tokens.
  /// - Throws: when the file cannot be written.
  public func save(_ credentials: Credentials) throws {
    let directory = file.deletingLastPathComponent()
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(credentials)
    let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(getpid()).tmp")
    // Created with 0600 from the start: the token is never readable by others, even briefly.
    let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary.path])
    }
    let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    let synced = fsync(fd)
    close(fd)
    guard written == data.count, synced == 0, rename(temporary.path, file.path) == 0 else {
      unlink(temporary.path)
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
    }
  }

  /// Removes the file.
  /// - Throws: when it exists and cannot be removed.
  public func clear() throws {
    if FileManager.default.fileExists(atPath: file.path) {
      try FileManager.default.removeItem(at: file)
    }
  }
}
