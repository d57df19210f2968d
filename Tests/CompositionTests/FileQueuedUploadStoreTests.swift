import CourierDomain
import CourierLinux
import Foundation
import Testing

/// `FileQueuedUploadStore`'s end of an upload (decisions 1302, 1303): the proof is durable
/// before the bytes go; by default they are unlinked in the process, and only when the caller
/// opts in is their name gone at once and their blocks freed by a detached process; what a
/// killed remover leaves goes with the next sweep.
@Suite("FileQueuedUploadStore")
struct FileQueuedUploadStoreTests {
  func folder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-qstore-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  func names(_ folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
      .filter { !$0.hasPrefix(".") }.sorted()
  }

  /// Sweeps until `id` is removed, with a generous deadline. A sweep that finds the folder's
  /// lock taken leaves everything for the next one, by design, and the lock can be taken for a
  /// moment by no one in this test: a child that another test spawns in the same process holds
  /// a copy of every descriptor from its fork to its exec, this store's lock included (seen once
  /// on a loaded machine: a sweep returned [] right after the one before it closed the lock).
  func sweepRemoves(_ id: String, from store: FileQueuedUploadStore) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      if store.sweep(keeping: { [] }) == [id] { return true }
      try await Task.sleep(for: .milliseconds(10))
    }
    return false
  }

  @Test("by default the bytes are unlinked in the process, before markDelivered returns")
  func deliveredInProcess() async throws {
    let root = try folder()
    defer { try? FileManager.default.removeItem(at: root) }
    let directory = root.appendingPathComponent("queued-uploads")
    let store = FileQueuedUploadStore(directory: directory)
    #expect(store.removal == .inProcess)
    let source = root.appendingPathComponent("video.bin")
    try Data(count: 3 * 1024 * 1024).write(to: source)
    let id = UUID().uuidString.lowercased()
    try store.keep(source, as: id) {}
    try store.resumeRecords.save(
      ResumableUpload(
        endpoint: "http://h/uploads", file: store.body(id).path, fileSize: 1, fileModified: 0,
        sha256: "", length: 1, idempotencyKey: "k"), as: id)
    try store.markDelivered(id)
    // Nothing left to wait for: the bytes went in this call, never through `<id>.sent`.
    #expect(names(directory) == ["\(id).delivered"])
    #expect(store.resumeRecords.load(id) == nil)
    #expect(try await sweepRemoves(id, from: store))
    #expect(names(directory).isEmpty)
  }

  @Test(
    "opted in: the proof, the bytes' name gone at once, their blocks freed by a detached process")
  func delivered() async throws {
    let root = try folder()
    defer { try? FileManager.default.removeItem(at: root) }
    let directory = root.appendingPathComponent("queued-uploads")
    let store = FileQueuedUploadStore(directory: directory, removal: .detachedProcess)
    let source = root.appendingPathComponent("video.bin")
    try Data(count: 3 * 1024 * 1024).write(to: source)
    let id = UUID().uuidString.lowercased()
    try store.keep(source, as: id) {}
    try store.resumeRecords.save(
      ResumableUpload(
        endpoint: "http://h/uploads", file: store.body(id).path, fileSize: 1, fileModified: 0,
        sha256: "", length: 1, idempotencyKey: "k"), as: id)
    #expect(names(directory) == ["\(id).body", "\(id).json"])
    try store.markDelivered(id)
    #expect(store.isDelivered(id))
    #expect(!FileManager.default.fileExists(atPath: store.body(id).path))
    #expect(store.resumeRecords.load(id) == nil)
    // The detached remover ends by itself; the proof stays until the entry is gone.
    let deadline = ContinuousClock.now + .seconds(120)
    while names(directory) != ["\(id).delivered"] && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(names(directory) == ["\(id).delivered"])
    #expect(try await sweepRemoves(id, from: store))
    #expect(names(directory).isEmpty)
  }

  @Test("bytes left as .sent (their remover killed) go with the next sweep once the entry is")
  func leftoverSent() async throws {
    let root = try folder()
    defer { try? FileManager.default.removeItem(at: root) }
    let directory = root.appendingPathComponent("queued-uploads")
    let store = FileQueuedUploadStore(directory: directory)
    let source = root.appendingPathComponent("photo.jpg")
    try Data(count: 1000).write(to: source)
    let id = UUID().uuidString.lowercased()
    try store.keep(source, as: id) {}
    try FileManager.default.moveItem(
      at: store.body(id), to: directory.appendingPathComponent("\(id).sent"))
    #expect(store.sweep { [id] }.isEmpty, "the entry is still there")
    #expect(names(directory) == ["\(id).sent"])
    #expect(try await sweepRemoves(id, from: store))
    #expect(names(directory).isEmpty)
  }
}
