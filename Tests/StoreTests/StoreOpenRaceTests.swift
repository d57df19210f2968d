import CourierDomain
import CourierFileStore
import CourierPorts
import CourierSQLite
import Foundation
import Synchronization
import Testing

/// Several openers of one new store at the same instant (threads released together by a
/// barrier, each with its own connection, as separate processes would have): none fails, the
/// schema is created once, every write is kept. Before the version was read inside the
/// migration's write transaction, the losers failed with "table records already exists".
@Suite("Concurrent first opens")
struct StoreOpenRaceTests {
  /// Runs `body` on `count` threads released at once; returns their errors.
  func together(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [String] {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let errors = Mutex<[String]>([])
    for index in 0..<count {
      done.enter()
      Thread {
        ready.signal()
        go.wait()
        do { try body(index) } catch { errors.withLock { $0.append("\(error)") } }
        done.leave()
      }.start()
    }
    for _ in 0..<count { ready.wait() }
    for _ in 0..<count { go.signal() }
    done.wait()
    return errors.withLock { $0 }
  }

  @Test("SQLite: 16 connections opening a new file at once all succeed, 10 rounds")
  func sqlite() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    for round in 0..<10 {
      let path = directory.path + "/round\(round).sqlite"
      let errors = together(16) { index in
        let store = try SQLiteLocalStore(path: path)
        defer { store.close() }
        try store.enqueue(Fixture.operation("r\(index)", .create, "x"))
      }
      #expect(errors.isEmpty, "round \(round): \(errors)")
      let store = try SQLiteLocalStore(path: path)
      #expect(try store.pending().count == 16)
      store.close()
    }
  }

  @Test("file store: 8 instances opening a new folder at once wait for each other")
  func file() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let errors = together(8) { index in
      let store = try FileLocalStore(directory: path)
      defer { store.close() }
      try store.enqueue(Fixture.operation("r\(index)", .create, "x"))
    }
    #expect(errors.isEmpty, "\(errors)")
    let store = try FileLocalStore(directory: path)
    #expect(try store.pending().count == 8)
    store.close()
  }

  @Test("SQLite: the database and its -wal and -shm files are 0600")
  func privateModes() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/modes.sqlite"
    let store = try SQLiteLocalStore(path: path)
    defer { store.close() }
    try store.enqueue(Fixture.operation("r", .create, "x"))
    for file in [path, path + "-wal", path + "-shm"] {
      var info = stat()
      #expect(stat(file, &info) == 0, "\(file)")
      #expect(info.st_mode & 0o777 == 0o600, "\(file): \(String(info.st_mode & 0o777, radix: 8))")
    }
  }
}
