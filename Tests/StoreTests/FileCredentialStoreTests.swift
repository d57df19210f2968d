import CourierDomain
import CourierFileStore
import CourierPorts
import CourierSystem
import Foundation
import Synchronization
import Testing

/// The session file: private, atomic, and never stale although `load()` is cached.
@Suite("FileCredentialStore")
struct FileCredentialStoreTests {
  func file(_ directory: TemporaryDirectory) -> URL {
    URL(fileURLWithPath: directory.path).appendingPathComponent("courier/session.json")
  }

  @Test("saved tokens load back, from a file only its owner can read")
  func roundTrip() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = FileCredentialStore(file: file(directory))
    #expect(try store.load() == nil)
    let saved = Credentials(
      accessToken: "access-1", refreshToken: "refresh-1",
      expiresAt: Date(timeIntervalSince1970: 2e9))
    try store.save(saved)
    #expect(try store.load() == saved)
    #expect(try store.load() == saved)
    let mode =
      try FileManager.default.attributesOfItem(atPath: file(directory).path)[
        .posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  @Test("what another process saves or clears is seen by the next load")
  func anotherProcess() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let mine = FileCredentialStore(file: file(directory))
    // A second instance stands for another `courier` process sharing the file.
    let theirs = FileCredentialStore(file: file(directory))
    try mine.save(Credentials(accessToken: "token-A", refreshToken: "r-A"))
    #expect(try mine.load()?.accessToken == "token-A")
    for round in 0..<20 {
      // Same length every time: only the replacement itself can tell them apart.
      let token = "token-\(round % 10)"
      try theirs.save(Credentials(accessToken: token, refreshToken: "r-\(round % 10)"))
      #expect(try mine.load()?.accessToken == token)
    }
    try theirs.clear()
    #expect(try mine.load() == nil)
  }

  @Test(
    "an unreadable session is no session, with the reason, never an error",
    arguments: [
      ("garbage", "{\"access"), ("wrong types", "{\"accessToken\": 42}"), ("empty", ""),
      ("not an object", "[1, 2]"), ("empty token", "{\"accessToken\": \"\"}"),
      ("absurd date", "{\"accessToken\": \"a\", \"expiresAt\": \"-999999-01-01T00:00:00Z\"}"),
      ("date of the wrong type", "{\"accessToken\": \"a\", \"expiresAt\": true}"),
    ])
  func unreadable(kind: String, content: String) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = FileCredentialStore(file: file(directory))
    try store.save(Credentials(accessToken: "good"))
    #expect(try store.load()?.accessToken == "good")
    try Data(content.utf8).write(to: file(directory))
    #expect(try store.load() == nil, "\(kind)")
    let reason = try #require(store.unusableReason)
    #expect(reason.contains(file(directory).path) && reason.contains("log in again"))
    try store.save(Credentials(accessToken: "good again"))
    #expect(try store.load()?.accessToken == "good again")
    #expect(store.unusableReason == nil)
  }

  @Test(
    "an expiry the client computes from an absurd expires_in is written so it reads back",
    arguments: [-1e308, 1e308, Double.nan, -Double.infinity, Double.infinity])
  func absurdExpiry(expiresIn: Double) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = FileCredentialStore(file: file(directory))
    let now = Date()
    try store.save(
      Credentials(
        accessToken: "t", refreshToken: "r", expiresAt: now.addingTimeInterval(expiresIn)))
    let loaded = try #require(try store.load())
    #expect(loaded.accessToken == "t" && loaded.refreshToken == "r")
    if expiresIn.isNaN {
      #expect(loaded.expiresAt == nil)
    } else if expiresIn < 0 {
      #expect(loaded.expiresAt == FileCredentialStore.earliestExpiry)
    } else {
      #expect(loaded.expiresAt == FileCredentialStore.latestExpiry)
    }
  }

  @Test("a FIFO or a folder at the session's path is an error at once, never a hang")
  func notARegularFile() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = file(directory)
    try FileManager.default.createDirectory(
      at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
    #expect(mkfifo(path.path, 0o600) == 0)
    // A FIFO with no writer: an open without O_NONBLOCK would block here for ever.
    let store = FileCredentialStore(file: path)
    #expect(throws: StoreError.self) { try store.load() }
    try FileManager.default.removeItem(at: path)
    try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
    #expect(throws: StoreError.self) { try FileCredentialStore(file: path).load() }
  }

  @Test("a symlink planted at the temporary path never receives the tokens")
  func plantedSymlink() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let session = file(directory)
    try FileManager.default.createDirectory(
      at: session.deletingLastPathComponent(), withIntermediateDirectories: true)
    let victim = directory.path + "/victim"
    try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
    let temporary = session.deletingLastPathComponent()
      .appendingPathComponent(".session.json.\(getpid()).tmp").path
    try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: victim)
    let store = FileCredentialStore(file: session)
    try store.save(Credentials(accessToken: "secret-token"))
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
    #expect(try store.load()?.accessToken == "secret-token")
    var info = stat()
    #expect(lstat(session.path, &info) == 0)
    #expect((info.st_mode & S_IFMT) == S_IFREG && (info.st_mode & 0o777) == 0o600)
    #expect(!FileManager.default.fileExists(atPath: temporary))
  }

  @Test("a session file others can read is tightened to 0600, with a warning")
  func looseMode() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let warnings = WarningLog()
    let store = FileCredentialStore(file: file(directory), warn: warnings.append)
    try store.save(Credentials(accessToken: "t"))
    #expect(chmod(file(directory).path, 0o644) == 0)
    #expect(try store.load()?.accessToken == "t")
    var info = stat()
    #expect(stat(file(directory).path, &info) == 0 && (info.st_mode & 0o777) == 0o600)
    #expect(warnings.lines.count == 1 && warnings.lines.first?.contains("0600") == true)
  }
}

/// Collects warnings.
final class WarningLog: Sendable {
  private let storage = Mutex<[String]>([])

  /// The warnings so far.
  var lines: [String] { storage.withLock { $0 } }

  /// Adds one.
  /// - Parameter line: the warning.
  @Sendable func append(_ line: String) { storage.withLock { $0.append(line) } }
}
