import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Synchronization
import Testing

/// `UploadQueue`: the bytes prepared once (an image compressed, anything else as it is), kept,
/// and one outbox entry describing them; nothing kept when the entry cannot be committed or
/// the original must not be sent; no request at all.
@Suite("UploadQueue")
struct UploadQueueTests {
  let target = URL(string: "http://server/photos") ?? URL(fileURLWithPath: "/")
  let endpoint = URL(string: "http://server/uploads") ?? URL(fileURLWithPath: "/")

  func input(_ name: String, _ data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-queue-\(UUID())-\(name)")
    try data.write(to: url)
    return url
  }

  func queue(
    _ store: FolderQueuedUploadStore, _ outbox: InMemoryLocalStore,
    compressor: any ImageCompressor = InMemoryImageCompressor(info: nil)
  ) -> UploadQueue {
    UploadQueue(
      compressor: compressor, store: store, outbox: outbox,
      temporaryDirectory: store.folder, now: { Date(timeIntervalSince1970: 42) })
  }

  @Test("a file that is not an image: its exact bytes kept, one pending entry describing them")
  func plainFile() async throws {
    let store = try FolderQueuedUploadStore()
    let outbox = InMemoryLocalStore()
    let data = patternedData(5000)
    let file = try input("clip.bin", data)
    defer { try? FileManager.default.removeItem(at: file) }
    let request = UploadRequest(
      file: file, target: target, title: "Clip",
      fields: [.text("album", "2026")], confirmation: .record)
    let entry = try await queue(store, outbox).enqueue(
      request, transfer: .auto, tusEndpoint: endpoint, tusConfirmation: .record)
    #expect(try outbox.entries() == [entry])
    #expect(entry.key.collection == "uploads")
    #expect(entry.state == .pending && entry.attempts == 0)
    #expect(entry.operation.enqueuedAt == Date(timeIntervalSince1970: 42))
    #expect(try Data(contentsOf: store.body(entry.key.id)) == data)
    let upload = try QueuedUpload(payload: entry.operation.payload)
    #expect(upload.transfer == .auto)
    #expect(upload.tusEndpoint == "http://server/uploads")
    #expect(upload.formTarget == "http://server/photos")
    #expect(upload.title == "Clip")
    #expect(upload.fields == [.init(name: "album", value: "2026")])
    #expect(upload.filename.hasSuffix("clip.bin"))
    #expect(upload.length == 5000)
    #expect(upload.verdict.reason == .notAnImage)
    #expect(try MultipartBoundary(upload.boundary).value == upload.boundary)
    // No record is written for it: only the outbox entry.
    #expect(try outbox.records(in: "uploads").isEmpty)
  }

  @Test("an image: the compressed copy is what is kept, as NAME.jpg")
  func image() async throws {
    let store = try FolderQueuedUploadStore()
    let outbox = InMemoryLocalStore()
    let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8) + patternedData(9000)
    let file = try input("beach.jpg", jpeg)
    defer { try? FileManager.default.removeItem(at: file) }
    let compressor = InMemoryImageCompressor(
      info: ImageInfo(
        format: .jpeg, width: 4000, height: 3000, hasLocation: true, hasMetadata: true,
        byteCount: 0),
      behavior: .produce(Data("small".utf8)))
    let entry = try await queue(store, outbox, compressor: compressor).enqueue(
      UploadRequest(file: file, target: endpoint, confirmation: .record), transfer: .tus)
    #expect(try Data(contentsOf: store.body(entry.key.id)) == Data("small".utf8))
    let upload = try QueuedUpload(payload: entry.operation.payload)
    #expect(upload.verdict.send == .compressed)
    #expect(upload.contentType == "image/jpeg")
    #expect(upload.filename.hasSuffix(".jpg"))
    #expect(upload.length == 5)
    #expect(upload.transfer == .tus)
    #expect(upload.tusEndpoint == "http://server/uploads")
    #expect(upload.tusConfirmation == .record)
    #expect(upload.formTarget == nil)
    // The compressed temporary copy is gone; only the kept bytes remain.
    let names = try FileManager.default.contentsOfDirectory(atPath: store.folder.path)
    #expect(names == ["\(entry.key.id).body"])
  }

  @Test("the entry cannot be committed: the error, and no bytes left behind")
  func commitFails() async throws {
    let store = try FolderQueuedUploadStore()
    let outbox = InMemoryLocalStore()
    outbox.failNextCommit()
    let file = try input("clip.bin", patternedData(100))
    defer { try? FileManager.default.removeItem(at: file) }
    await #expect(throws: CourierError.self) {
      _ = try await queue(store, outbox).enqueue(
        UploadRequest(file: file, target: target), transfer: .multipart)
    }
    #expect(try outbox.entries().isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder.path).isEmpty)
  }

  @Test("an original that must not leave the device, or a field that cannot be sent: refused")
  func refused() async throws {
    let store = try FolderQueuedUploadStore()
    let outbox = InMemoryLocalStore()
    let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8)
    let photo = try input("gps.jpg", jpeg)
    let file = try input("clip.bin", patternedData(10))
    defer {
      try? FileManager.default.removeItem(at: photo)
      try? FileManager.default.removeItem(at: file)
    }
    let failing = InMemoryImageCompressor(
      info: ImageInfo(
        format: .jpeg, width: 4000, height: 3000, hasLocation: true, hasMetadata: true,
        byteCount: 0),
      behavior: .fail(CourierError(.unexpected)))
    let location = try await #require(throws: CourierError.self) {
      _ = try await queue(store, outbox, compressor: failing).enqueue(
        UploadRequest(file: photo, target: target), transfer: .multipart)
    }
    #expect(location.kind == .invalidInput)
    let badField = try await #require(throws: CourierError.self) {
      _ = try await queue(store, outbox).enqueue(
        UploadRequest(file: file, target: target, fields: [.text("bad\\name", "x")]),
        transfer: .multipart)
    }
    #expect(badField.kind == .invalidInput)
    #expect(try outbox.entries().isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder.path).isEmpty)
  }
}
