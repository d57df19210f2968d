import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Computes the SHA-256 of a range of a file: the tus client's `Upload-Checksum` of each chunk,
/// and the identity of bytes that their file's metadata cannot vouch for (decision 1303). An
/// adapter reads the range itself, with a buffer of its own, so memory stays flat whatever the
/// size, and may use what the CPU offers (the SHA extensions); every adapter gives the digest
/// Domain's portable `SHA256` gives, which is the reference the contract tests compare with.
package protocol FileHasher: Sendable {
  /// The SHA-256 of `length` bytes of `file` from `offset`.
  /// - Parameters:
  ///   - file: the file.
  ///   - offset: the first byte.
  ///   - length: how many bytes.
  /// - Returns: the 32-byte digest.
  /// - Throws: `CourierError`: `fileUnavailable` naming the file when it cannot be opened or
  ///   ends before the range does (`file_changed`: it got shorter), `cancelled` when the
  ///   calling task is cancelled.
  func sha256(of file: URL, offset: Int64, length: Int64) throws -> [UInt8]

  /// An empty streaming SHA-256 as fast as this hasher's (the portable one by default).
  /// - Returns: a fresh digest.
  func streamingDigest() -> any SHA256Stream
}

/// SHA-256 fed piece by piece, as bytes arrive: a download hashes its body while it is
/// written instead of reading the file back afterwards (decision 2503).
package protocol SHA256Stream: Sendable {
  /// Adds bytes to the digest.
  /// - Parameter bytes: the next bytes of the message.
  mutating func update(_ bytes: UnsafeRawBufferPointer)
  /// The 32-byte digest of every byte added; the stream is spent afterwards.
  /// - Returns: the digest.
  mutating func finalize() -> [UInt8]
}

extension SHA256: SHA256Stream {}

extension FileHasher {
  /// The portable streaming SHA-256, for hashers without a faster one.
  /// - Returns: an empty digest.
  package func streamingDigest() -> any SHA256Stream { SHA256() }
}
