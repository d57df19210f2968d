import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import Synchronization
import Testing

@Suite("MultipartPart.file(at:)")
struct MultipartFilePartTests {
  @Test("size read, media type sniffed from bytes before the extension")
  func sniffed() throws {
    let scratch = try ScratchDirectory()
    let source = try scratch.file(
      "really-a-jpeg.png", [0xFF, 0xD8, 0xFF, 0xE0] + patternBytes(500))
    let part = try MultipartPart.file("file", at: source)
    #expect(part.contentType == "image/jpeg")
    #expect(part.filename == "really-a-jpeg.png")
    #expect(part.content == .file(source, size: 504))
    let named = try MultipartPart.file(
      "file", at: source, filename: "x.bin", contentType: "image/webp")
    #expect(named.contentType == "image/webp")
    #expect(named.filename == "x.bin")
  }

  @Test("the extension decides when the bytes say nothing")
  func byExtension() throws {
    let scratch = try ScratchDirectory()
    let source = try scratch.file("notes.txt", Array("hello".utf8))
    #expect(try MultipartPart.file("f", at: source).contentType == "text/plain")
  }

  @Test("a missing file or a folder is a clear error naming it")
  func unavailable() throws {
    let scratch = try ScratchDirectory()
    let missing = #expect(throws: CourierError.self) {
      try MultipartPart.file("file", at: scratch.url.appendingPathComponent("nope.jpg"))
    }
    #expect(missing?.kind == .fileUnavailable)
    #expect(missing?.field == "file")
    #expect(missing?.userMessage.contains("nope.jpg") == true)
    let folder = #expect(throws: CourierError.self) {
      try MultipartPart.file("file", at: scratch.url)
    }
    #expect(folder?.userMessage.contains("folder") == true)
  }
}
