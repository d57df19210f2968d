import CourierPorts
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps the session's tokens in a JSON file readable by its owner only (mode 0600), replaced
/// atomically so a crash never leaves half a token.
public struct FileCredentialStore: CredentialStore {
  /// The file.
  public let file: URL

  /// Creates a store.
  /// - Parameter file: the file (its directory is created when needed, mode 0700).
  public init(file: URL) { self.file = file }

  /// Loads the tokens.
  /// - Returns: them, or nil when there is no file.
  /// - Throws: `CocoaError` when the file exists but cannot be read or decoded.
  public func load() throws -> Credentials? {
    guard FileManager.default.fileExists(atPath: file.path) else { return nil }
    let data = try Data(contentsOf: file)
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(Credentials.self, from: data)
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
