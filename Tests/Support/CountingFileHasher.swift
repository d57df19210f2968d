import CourierPorts
import CourierSystem
import Foundation
import Synchronization

/// The portable `FileHasher` that remembers every range it read from a file and counts the
/// bytes its streaming digests were fed: a test of a download hashed while it arrives asserts
/// that no file was read back and that each byte was hashed once.
package final class CountingFileHasher: FileHasher {
  private let base = SwiftFileHasher()
  private let ranges = Mutex<[ClosedRange<Int64>]>([])
  private let fed = Mutex<Int64>(0)

  /// A hasher that has read nothing yet.
  package init() {}

  /// The ranges `sha256(of:offset:length:)` read so far (first byte through last), in order.
  package var reads: [ClosedRange<Int64>] { ranges.withLock { $0 } }

  /// The bytes fed to every streaming digest this hasher made.
  package var streamed: Int64 { fed.withLock { $0 } }

  /// The SHA-256 of a range of a file, the range remembered.
  package func sha256(of file: URL, offset: Int64, length: Int64) throws -> [UInt8] {
    if length > 0 { ranges.withLock { $0.append(offset...(offset + length - 1)) } }
    return try base.sha256(of: file, offset: offset, length: length)
  }

  /// A portable streaming digest that adds what it is fed to `streamed`.
  package func streamingDigest() -> any SHA256Stream { Stream(owner: self) }

  private struct Stream: SHA256Stream {
    let owner: CountingFileHasher
    var digest = SHA256()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
      owner.fed.withLock { $0 += Int64(bytes.count) }
      digest.update(bytes)
    }

    mutating func finalize() -> [UInt8] { digest.finalize() }
  }
}
