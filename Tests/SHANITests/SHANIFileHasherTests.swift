import CourierDomain
import CourierPorts
import CourierSHANI
import CourierTestSupport
import Foundation
import Testing

/// `SHANIFileHasher`: offered exactly when the CPU has the SHA extensions, and then the same
/// digests as the portable hasher for random data of many sizes (the contract suite covers the
/// edges).
@Suite("SHANIFileHasher")
struct SHANIFileHasherTests {
  /// The `sha_ni` flag of /proc/cpuinfo, on Linux x86; nil where it cannot be told.
  static var cpuinfoSaysSHA: Bool? {
    #if os(Linux) && arch(x86_64)
      guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else {
        return nil
      }
      guard let flags = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
      else { return nil }
      let words = Set(flags.split(separator: " ").map(String.init))
      return words.contains("sha_ni") && words.contains("sse4_1")
    #else
      return nil
    #endif
  }

  @Test("available exactly when the CPU says it has the SHA extensions")
  func availability() {
    if let expected = Self.cpuinfoSaysSHA {
      #expect(SHANIFileHasher.isSupported == expected)
    }
    #expect((SHANIFileHasher() != nil) == SHANIFileHasher.isSupported)
  }

  @Test("random files of random sizes: the digest of the portable hasher")
  func randomFiles() throws {
    guard let fast = SHANIFileHasher() else { return }
    var generator = SplitMix64(testSeed: 0x5_4A41_5EED)
    for _ in 0..<20 {
      let count = Int.random(in: 0...300_000, using: &generator)
      let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
      let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-shani-\(UUID().uuidString).bin")
      try data.write(to: url)
      defer { try? FileManager.default.removeItem(at: url) }
      let offset = count == 0 ? 0 : Int.random(in: 0..<count, using: &generator)
      let length = Int64(count - offset)
      let portable = try SwiftFileHasher().sha256(of: url, offset: Int64(offset), length: length)
      #expect(
        try fast.sha256(of: url, offset: Int64(offset), length: length) == portable,
        "\(generator.seedDescription): \(count) bytes from \(offset)")
    }
  }
}
