import CourierLinux
import Foundation
import Synchronization
import Testing

/// `DownloadLock` (decisions 2517, 2519): one holder at a time, the file gone once released,
/// and a waiter that locked a file its holder removed starting again on the path's new file.
@Suite("DownloadLock")
struct DownloadLockTests {
  /// A value the test's tasks share.
  final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
  }

  func folder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-download-lock-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  @Test("the lock file is gone once the body returns, and once it throws")
  func removedWhenReleased() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent(".locks/a.lock").path
    let existed = try await DownloadLock.holding(path) {
      FileManager.default.fileExists(atPath: path)
    }
    #expect(existed)
    #expect(!FileManager.default.fileExists(atPath: path))
    struct Failed: Error {}
    await #expect(throws: Failed.self) {
      try await DownloadLock.holding(path) { throw Failed() }
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("six callers at once: never two bodies together, every one runs, nothing left")
  func oneAtATime() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("b.lock").path
    // (running now, most at once, bodies run)
    let counts = Shared((0, 0, 0))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<6 {
        group.addTask {
          try await DownloadLock.holding(path) {
            counts.withLock {
              $0.0 += 1
              $0.1 = max($0.1, $0.0)
            }
            // Other callers run meanwhile: each is in its wait, or in the body if the lock
            // let it in.
            for _ in 0..<20 { await Task.yield() }
            counts.withLock {
              $0.0 -= 1
              $0.2 += 1
            }
          }
        }
      }
      try await group.waitForAll()
    }
    let (running, most, ran) = counts.withLock { $0 }
    #expect(running == 0 && ran == 6)
    #expect(most == 1, "\(most) bodies ran at once")
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("a waiter whose file was removed by its holder takes the path's new file, not the old")
  func waiterStartsAgain() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("c.lock").path
    // An outside holder (another process's, as the kernel sees it: its own open file).
    let outside = open(path, O_RDWR | O_CREAT, 0o600)
    try #require(outside >= 0 && flock(outside, LOCK_EX) == 0)
    let entered = Shared(false)
    let waiter = Task {
      try await DownloadLock.holding(path) { entered.withLock { $0 = true } }
    }
    // Descriptors of this process open on the file the path names now (a removed file's link
    // reads "<path> (deleted)").
    let openOnPath = { () -> Int in
      let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      return fds.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
          == path
      }.count
    }
    // The waiter waits once it has the file open beside the outside holder.
    while openOnPath() < 2 { try await Task.sleep(for: .milliseconds(1)) }
    // The outside holder removes its file and a newcomer locks a new one at the same path,
    // then the old file's lock goes: the waiter must not enter while the newcomer holds.
    unlink(path)
    let newcomer = open(path, O_RDWR | O_CREAT, 0o600)
    try #require(newcomer >= 0 && flock(newcomer, LOCK_EX) == 0)
    close(outside)
    // It either enters on the removed file (wrong) or opens the path's new file to wait on it.
    while !entered.withLock({ $0 }) && openOnPath() < 2 {
      try await Task.sleep(for: .milliseconds(1))
    }
    #expect(!entered.withLock { $0 }, "the waiter entered on a removed file")
    unlink(path)
    close(newcomer)
    try await waiter.value
    #expect(entered.withLock { $0 })
  }
}
