import CourierFileStore
import CourierPorts
import Foundation
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

  @Test("a damaged file is an error, and a good one afterwards loads again")
  func damaged() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = FileCredentialStore(file: file(directory))
    try store.save(Credentials(accessToken: "good"))
    #expect(try store.load()?.accessToken == "good")
    try Data("{\"access".utf8).write(to: file(directory))
    #expect(throws: (any Error).self) { try store.load() }
    try store.save(Credentials(accessToken: "good again"))
    #expect(try store.load()?.accessToken == "good again")
  }
}
