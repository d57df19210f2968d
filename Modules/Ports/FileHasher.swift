import CourierDomain

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
}
