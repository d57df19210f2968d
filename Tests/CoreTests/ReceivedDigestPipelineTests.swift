import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// `ReceivedDigest` following a file (decision 2508): the writer only writes and counts, a
/// thread of the digest's own reads the written bytes back and hashes them; the digest must be
/// the same as hashing inline, whatever the pieces, restarts and resumed prefixes.
@Suite("ReceivedDigest on a thread of its own")
struct ReceivedDigestPipelineTests {
  func folder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-digest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  /// Writes `bytes` at `offset` of `file` the way a transport does, then tells the digest.
  func write(_ bytes: Data, at offset: Int, to handle: FileHandle, _ digest: ReceivedDigest) throws
  {
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: bytes)
    bytes.withUnsafeBytes { digest.append($0) }
  }

  @Test("pieces of every size, across the wake-up threshold: the same digest as inline")
  func sameAsInline() throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("partial")
    var generator = SplitMix64(seed: 2508)
    let whole = Data(
      (0..<(5 << 20) + 123).map { _ in UInt8.random(in: 0...255, using: &generator) })
    #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    let followed = ReceivedDigest(hasher: SwiftFileHasher(), following: file)
    followed.begin(at: 0)
    var offset = 0
    var size = 1
    while offset < whole.count {
      let end = min(whole.count, offset + size)
      try write(whole[offset..<end], at: offset, to: handle, followed)
      offset = end
      size = size * 3 % 700_001 + 1
    }
    #expect(followed.count == Int64(whole.count))
    #expect(followed.digest(ofLength: Int64(whole.count)) == SHA256.hash(whole))
  }

  @Test("a restart from byte 0 and a resumed prefix, followed: the digest of the final file")
  func restartAndResume() throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("partial")
    let old = Data(repeating: 0xEE, count: 3 << 20)
    let whole = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    let followed = ReceivedDigest(hasher: SwiftFileHasher(), following: file)
    followed.begin(at: 0)
    try write(old.prefix(2 << 20), at: 0, to: handle, followed)
    // Another version from byte 0: the old bytes are hashed no more.
    followed.begin(at: 0)
    try write(whole.prefix(1 << 20), at: 0, to: handle, followed)
    // A body at another offset makes it unusable; a fresh one covers the prefix from disk.
    try handle.truncate(atOffset: 1 << 20)
    let resumed = ReceivedDigest(hasher: SwiftFileHasher(), following: file)
    try resumed.cover(file, length: 1 << 20)
    resumed.begin(at: 1 << 20)
    try write(whole.suffix(from: 1 << 20), at: 1 << 20, to: handle, resumed)
    #expect(resumed.digest(ofLength: Int64(whole.count)) == SHA256.hash(whole))
    followed.begin(at: 5)
    #expect(followed.digest(ofLength: Int64(whole.count)) == nil)
  }
}
