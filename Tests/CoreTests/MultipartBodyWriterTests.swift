import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// A fresh directory per test, removed at the end.
final class ScratchDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-multipart-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
    let file = url.appendingPathComponent(name)
    try Data(bytes).write(to: file)
    return file
  }

  func entries() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
  }
}

func patternBytes(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
  var state = seed
  return (0..<count).map { _ in
    state = state &* 1_664_525 &+ 1_013_904_223
    return UInt8(truncatingIfNeeded: state >> 24)
  }
}

@Suite("MultipartBodyWriter")
struct MultipartBodyWriterTests {
  let scratch: ScratchDirectory
  let output: URL

  init() throws {
    scratch = try ScratchDirectory()
    output = scratch.url.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
  }

  func outputEntries() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: output.path)
  }

  /// The same form with the file's bytes in memory: the reference the written body must match.
  func form(fileURL: URL, bytes: [UInt8], inMemory: Bool) -> MultipartForm {
    MultipartForm([
      .text("title", "Holiday"),
      inMemory
        ? .data("file", filename: "photo.jpg", contentType: "image/jpeg", data: Data(bytes))
        : .file(
          "file", filename: "photo.jpg", contentType: "image/jpeg", url: fileURL,
          size: Int64(bytes.count)),
      .text("tags", "sea, sun"),
    ])
  }

  @Test(
    "the written file is exactly the layout: length and bytes",
    arguments: [0, 1, 65_535, 65_536, 65_537, 300_001])
  func writtenMatchesLayout(size: Int) async throws {
    let bytes = patternBytes(size)
    let source = try scratch.file("source.bin", bytes)
    let boundary = MultipartBoundary.random()
    let layout = try form(fileURL: source, bytes: bytes, inMemory: false).layout(
      boundary: boundary)
    let reference = try #require(
      try form(fileURL: source, bytes: bytes, inMemory: true).layout(boundary: boundary)
        .inMemoryBody)
    let writer = MultipartBodyWriter(
      directory: output, chunkSize: 64 * 1024, inMemoryThreshold: 0)
    let body = try await writer.makeBody(layout)
    let url = try #require(body.fileURL)
    let written = try Data(contentsOf: url)
    #expect(Int64(written.count) == layout.contentLength)
    #expect(body.contentLength == layout.contentLength)
    #expect(written == reference)
    #expect(body.contentType == "multipart/form-data; boundary=\(boundary.value)")
    let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]
    #expect((permissions as? NSNumber)?.intValue == 0o600)
    body.remove()
    #expect(try outputEntries().isEmpty)
    body.remove()  // twice is harmless
  }

  @Test("bodies up to the threshold stay in memory, longer ones go to a file")
  func threshold() async throws {
    let bytes = patternBytes(1000)
    let source = try scratch.file("source.bin", bytes)
    let layout = try form(fileURL: source, bytes: bytes, inMemory: false).layout()
    let atLimit = MultipartBodyWriter(directory: output, inMemoryThreshold: layout.contentLength)
    let memory = try await atLimit.makeBody(layout)
    guard case .memory(let data) = memory.storage else {
      Issue.record("expected an in-memory body, got \(memory.storage)")
      return
    }
    #expect(Int64(data.count) == layout.contentLength)
    #expect(try outputEntries().isEmpty)
    let below = MultipartBodyWriter(directory: output, inMemoryThreshold: layout.contentLength - 1)
    let onDisk = try await below.makeBody(layout)
    #expect(onDisk.fileURL != nil)
    #expect(try Data(contentsOf: #require(onDisk.fileURL)) == data)
    onDisk.remove()
  }

  @Test("withBody removes the temporary file after success")
  func removedOnSuccess() async throws {
    let source = try scratch.file("source.bin", patternBytes(10_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: 0)
    let seen = try await writer.withBody(layout) { body -> Bool in
      FileManager.default.fileExists(atPath: body.fileURL?.path ?? "")
    }
    #expect(seen)
    #expect(try outputEntries().isEmpty)
  }

  @Test("withBody removes the temporary file when the operation fails")
  func removedOnFailure() async throws {
    let source = try scratch.file("source.bin", patternBytes(10_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: 0)
    await #expect(throws: CourierError.self) {
      try await writer.withBody(layout) { body in
        #expect(try outputEntries().count == 1)
        throw CourierError(.server, status: 500)
      }
    }
    #expect(try outputEntries().isEmpty)
  }

  @Test("withBody removes the temporary file when the operation is cancelled")
  func removedOnCancellationDuringOperation() async throws {
    let source = try scratch.file("source.bin", patternBytes(10_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: 0)
    let transport = InMemoryTransport()
    transport.enqueue(.handler { _ in throw CancellationError() })
    let request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:1/photos")!)
    await #expect(throws: CancellationError.self) {
      try await writer.withBody(layout) { body in
        try await body.send(request, through: transport)
      }
    }
    #expect(transport.uploadedFiles.count == 1)
    #expect(try outputEntries().isEmpty)
  }

  @Test("a cancelled task leaves no temporary file behind")
  func removedOnCancellationBeforeWrite() async throws {
    let source = try scratch.file("source.bin", patternBytes(200_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: 0)
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await writer.makeBody(layout)
    }
    let error = await #expect(throws: CourierError.self) { try await task.value }
    #expect(error?.kind == .cancelled)
    #expect(try outputEntries().isEmpty)
  }

  @Test("cancellation between two chunks removes the partial file")
  func removedOnCancellationMidWrite() throws {
    let source = try scratch.file("source.bin", patternBytes(1 << 20))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    let writer = MultipartBodyWriter(directory: output, chunkSize: 64 * 1024)
    let target = output.appendingPathComponent("body")
    let polls = Mutex(0)
    let error = #expect(throws: CourierError.self) {
      try writer.writeFileSynchronously(layout, to: target) {
        // Cancel once a few chunks are on disk.
        polls.withLock { count in
          count += 1
          return count > 4
        }
      }
    }
    #expect(error?.kind == .cancelled)
    #expect(polls.withLock { $0 } == 5)
    #expect(try outputEntries().isEmpty)
  }

  @Test("a missing source file is a clear error and leaves nothing behind")
  func missingSource() async throws {
    let gone = scratch.url.appendingPathComponent("gone.jpg")
    let layout = try MultipartForm([
      .file("file", filename: "gone.jpg", contentType: "image/jpeg", url: gone, size: 10)
    ]).layout()
    let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: 0)
    let error = await #expect(throws: CourierError.self) { try await writer.makeBody(layout) }
    #expect(error?.kind == .fileUnavailable)
    #expect(error?.code == "file_unreadable")
    #expect(error?.userMessage.contains("gone.jpg") == true)
    #expect(try outputEntries().isEmpty)
  }

  @Test(
    "a source file that changed size since it was looked at is refused",
    arguments: [true, false])
  func changedSource(grew: Bool) async throws {
    let source = try scratch.file("photo.jpg", patternBytes(100_000))
    let layout = try MultipartForm([.file("file", at: source)]).layout()
    try Data(patternBytes(grew ? 100_001 : 99_999)).write(to: source)
    for threshold in [Int64(0), 1 << 30] {
      let writer = MultipartBodyWriter(directory: output, inMemoryThreshold: threshold)
      let error = await #expect(throws: CourierError.self) { try await writer.makeBody(layout) }
      #expect(error?.code == "file_changed")
      #expect(error?.userMessage.contains("photo.jpg") == true)
    }
    #expect(try outputEntries().isEmpty)
  }

  @Test("the chunk size is clamped to 64 KiB...1 MiB")
  func chunkClamp() {
    #expect(MultipartBodyWriter(chunkSize: 1).chunkSize == 64 * 1024)
    #expect(MultipartBodyWriter(chunkSize: 1 << 30).chunkSize == 1 << 20)
    #expect(MultipartBodyWriter().chunkSize == MultipartBodyWriter.defaultChunkSize)
  }
}
