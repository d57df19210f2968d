import CourierDomain
import CourierPorts
import Foundation
import Testing

@Suite("BodySegment")
struct BodySegmentTests {
  @Test("read hands bytes in memory over in pieces of at most the chunk size")
  func readsBytes() throws {
    var pieces: [Data] = []
    try BodySegment.bytes(Data("abcdefg".utf8)).read(chunkSize: 3) { pieces.append($0) }
    #expect(pieces.map { String(decoding: $0, as: UTF8.self) } == ["abc", "def", "g"])
  }

  @Test("read hands a file range over from its offset, and only its length")
  func readsFileRange() throws {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("body-segment-\(UUID().uuidString)")
    try Data("0123456789".utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    var read = Data()
    let segment = BodySegment.file(url, offset: 2, length: 5)
    try segment.read(chunkSize: 2) { read.append($0) }
    #expect(String(decoding: read, as: UTF8.self) == "23456")
    #expect(segment.length == 5)
  }

  @Test("a file shorter than its range is fileUnavailable")
  func shortFile() throws {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("body-segment-\(UUID().uuidString)")
    try Data("0123".utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    #expect {
      try BodySegment.file(url, offset: 0, length: 10).read { _ in }
    } throws: { ($0 as? CourierError)?.kind == .fileUnavailable }
  }
}
