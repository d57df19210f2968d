import CourierDomain
import CourierPorts
import CourierSHANI
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// Every `FileHasher` gives Domain's `SHA256` digests for any range of a file, and the same
/// errors for a file that is missing, too short or not a regular file.
@Suite("FileHasher contract")
struct FileHasherContractTests {
  struct Adapter: Sendable, CustomTestStringConvertible {
    let name: String
    let hasher: any FileHasher
    var testDescription: String { name }
  }

  static var adapters: [Adapter] {
    var list = [Adapter(name: "SwiftFileHasher", hasher: SwiftFileHasher())]
    if let fast = SHANIFileHasher() { list.append(Adapter(name: "SHANIFileHasher", hasher: fast)) }
    return list
  }

  /// Bytes that repeat with no short period.
  static func bytes(_ count: Int, seed: UInt32 = 1) -> Data {
    var state = seed
    return Data(
      (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
      })
  }

  static func file(_ data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-hash-\(UUID().uuidString).bin")
    try data.write(to: url)
    return url
  }

  @Test("a streaming digest fed in random pieces equals the file's digest", arguments: adapters)
  func streamingDigest(_ adapter: Adapter) throws {
    var random = SplitMix64(testSeed: 2503)
    for _ in 0..<20 {
      let data = Self.bytes(
        Int(random.next() % 300_000), seed: UInt32(truncatingIfNeeded: random.next()))
      var stream = adapter.hasher.streamingDigest()
      var index = 0
      while index < data.count {
        // Pieces from 1 byte to past a 64-byte block and a 16 KiB write.
        let piece = min(data.count - index, 1 + Int(random.next() % 20_000))
        data[index..<(index + piece)].withUnsafeBytes { stream.update($0) }
        index += piece
      }
      #expect(
        stream.finalize() == SHA256.hash(data), "\(random.seedDescription), \(data.count) bytes")
    }
  }

  @Test("known answers: empty, abc, two blocks' worth", arguments: adapters)
  func knownAnswers(_ adapter: Adapter) throws {
    let cases: [(String, String)] = [
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
    ]
    for (text, expected) in cases {
      let url = try Self.file(Data(text.utf8))
      defer { try? FileManager.default.removeItem(at: url) }
      let digest = try adapter.hasher.sha256(of: url, offset: 0, length: Int64(text.utf8.count))
      #expect(SHA256.hex(digest) == expected, "\(text)")
    }
  }

  @Test(
    "every length around the block and padding edges, from several offsets", arguments: adapters)
  func rangesMatchTheReference(_ adapter: Adapter) throws {
    let data = Self.bytes(3 * 1024 * 1024 + 333)
    let url = try Self.file(data)
    defer { try? FileManager.default.removeItem(at: url) }
    let lengths = Array(0...200) + [447, 448, 511, 512, 513, 4095, 4096, 4097, 65_537]
    // Across the 1 MiB reads of the shared reader, with pieces that end mid-block (few: the
    // reference is slow in a debug build).
    let long = [(1 << 20) + 63, 2 * (1 << 20) + 55]
    for offset in [0, 1, 63, 64, 1000] {
      for length in lengths + ([0, 63].contains(offset) ? long : []) {
        let slice = data.subdata(in: offset..<(offset + length))
        let digest = try adapter.hasher.sha256(
          of: url, offset: Int64(offset), length: Int64(length))
        #expect(digest == SHA256.hash(slice), "offset \(offset), length \(length)")
      }
    }
  }

  @Test(
    "a range past the end is file_changed; a missing file or a folder is fileUnavailable",
    arguments: adapters)
  func refusals(_ adapter: Adapter) throws {
    let url = try Self.file(Self.bytes(1000))
    defer { try? FileManager.default.removeItem(at: url) }
    #expect {
      _ = try adapter.hasher.sha256(of: url, offset: 10, length: 991)
    } throws: { ($0 as? CourierError)?.code == "file_changed" }
    let missing = url.appendingPathExtension("missing")
    #expect {
      _ = try adapter.hasher.sha256(of: missing, offset: 0, length: 1)
    } throws: { ($0 as? CourierError)?.kind == .fileUnavailable }
    #expect {
      _ = try adapter.hasher.sha256(
        of: FileManager.default.temporaryDirectory, offset: 0, length: 1)
    } throws: { ($0 as? CourierError)?.kind == .fileUnavailable }
  }
}
