import CourierSystem
import Foundation
import Testing

/// The descriptor wrapper that replaced `FileHandle` in the modules (decision 1414).
@Suite("OpenFile")
struct OpenFileTests {
  static func scratch() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-openfile-\(UUID().uuidString)")
    try Data().write(to: url)
    return url
  }

  @Test("writes, seeks and reads back; a read past the end is empty")
  func roundTrip() throws {
    let url = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: url) }
    let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let output = try OpenFile.writing(url.path)
    try output.write(contentsOf: bytes)
    #expect(try output.offset() == UInt64(bytes.count))
    output.close()
    output.close()

    let input = try OpenFile.reading(url.path)
    #expect(try input.seekToEnd() == UInt64(bytes.count))
    try input.seek(toOffset: 1000)
    #expect(try input.read(upToCount: 5000) == bytes[1000..<6000])
    try input.seek(toOffset: UInt64(bytes.count) - 10)
    #expect(try input.read(upToCount: 100) == bytes.suffix(10))
    #expect(try input.read(upToCount: 100).isEmpty)
    #expect(try input.read(upToCount: 0).isEmpty)
  }

  @Test("writing does not truncate what is there")
  func writingKeepsTheRest() throws {
    let url = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: url) }
    try Data("abcdef".utf8).write(to: url)
    try OpenFile.writing(url.path).write(contentsOf: Data("XY".utf8))
    #expect(try Data(contentsOf: url) == Data("XYcdef".utf8))
  }

  @Test("a missing file fails with the system's reason; so does reading a directory")
  func failures() throws {
    let missing = "/nonexistent-\(UUID().uuidString)"
    #expect(throws: OpenFile.Failure(operation: "open", code: ENOENT)) {
      try OpenFile.reading(missing)
    }
    do {
      _ = try OpenFile.reading(missing)
    } catch {
      #expect(error.description == "open failed: No such file or directory")
    }
    let folder = try OpenFile.reading(FileManager.default.temporaryDirectory.path)
    #expect(throws: OpenFile.Failure(operation: "read", code: EISDIR)) {
      try folder.read(upToCount: 10)
    }
  }

  @Test("a released file's descriptor is closed")
  func releaseCloses() throws {
    let url = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: url) }
    var descriptor: Int32 = -1
    do {
      let file = try OpenFile.reading(url.path)
      descriptor = file.descriptor
      #expect(fcntl(descriptor, F_GETFD) >= 0)
    }
    #expect(fcntl(descriptor, F_GETFD) == -1)
  }
}
