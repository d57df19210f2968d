import CourierPorts
import Foundation
import Testing

@testable import CourierCurl

/// The read callback's feeder: the bytes it hands libcurl, and the one short buffer it uses to
/// keep the kernel's copy out of its slow 4K-aliasing phase.
@Suite("BodyReader")
struct BodyReaderTests {
  static func address(_ value: UInt) -> UnsafeMutableRawPointer {
    UnsafeMutableRawPointer(bitPattern: value)
      ?? UnsafeMutableRawPointer.allocate(
        byteCount: 1, alignment: 1)
  }

  @Test(
    "a read whose file offset sits just behind the buffer modulo 4 KiB is shortened",
    arguments: [
      // (file offset, buffer address, count, expected)
      (Int64(0), UInt(0x7000_0010), 524_288, 524_160),  // 16 behind: the slow phase
      (Int64(4096 * 9), UInt(0x7000_0030), 524_288, 524_160),  // 48 behind
      (Int64(1), UInt(0x7000_0010), 524_288, 524_160),  // 15 behind
      (Int64(16), UInt(0x7000_0010), 524_288, 524_288),  // same phase: fine
      (Int64(0), UInt(0x7000_0050), 524_288, 524_288),  // 80 behind: fine
      (Int64(4000), UInt(0x7000_0010), 524_288, 524_288),  // ahead: fine
      (Int64(0), UInt(0x7000_0010), 4096, 4096),  // small reads are left alone
    ])
  func shortened(offset: Int64, buffer: UInt, count: Int, expected: Int) {
    #expect(
      BodyReader.aliasingSafeCount(offset: offset, destination: Self.address(buffer), count: count)
        == expected)
  }

  @Test("a whole file through a buffer in the slow phase: same bytes, one short buffer")
  func wholeFile() throws {
    let size = 3 << 20
    let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-bodyreader-\(UUID().uuidString)")
    try bytes.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    // libcurl's upload buffer as glibc places a large one: 16 bytes past a page.
    let capacity = 512 << 10
    let storage = UnsafeMutableRawPointer.allocate(byteCount: capacity + 4096 + 16, alignment: 4096)
    defer { storage.deallocate() }
    let buffer = storage + 16
    let reader = BodyReader([.file(file, offset: 0, length: Int64(size))], context: "test")
    var sent = Data()
    var counts: [Int] = []
    while true {
      let count = try #require(reader.read(into: buffer, capacity: capacity))
      if count == 0 { break }
      counts.append(count)
      sent.append(Data(bytes: buffer, count: count))
    }
    #expect(sent == bytes)
    #expect(counts.first == capacity - 128)
    #expect(counts.dropFirst().dropLast().allSatisfy { $0 == capacity })
  }
}
