import CourierDomain
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The SHA-256 of a file built as its bytes are written (decision 2503): a transport that
/// writes a `ResponseSink` tells it where the body starts and hands it each piece after
/// writing it, so a download checks `Repr-Digest` without reading the file back.
///
/// It covers bytes `0..<count` of the file. A body that starts at `count` continues it, one
/// that starts at 0 starts it afresh, and one that starts anywhere else leaves it unusable
/// (``digest(ofLength:)`` then answers nil and the caller hashes the file itself).
package final class ReceivedDigest: Sendable, Equatable {
  private struct State {
    var stream: any SHA256Stream
    var count: Int64 = 0
    var usable = true
  }

  private let hasher: any FileHasher
  private let state: Mutex<State>

  /// An empty digest.
  /// - Parameter hasher: supplies the streaming SHA-256 (SHA-NI where the CPU has it).
  package init(hasher: any FileHasher) {
    self.hasher = hasher
    state = Mutex(State(stream: hasher.streamingDigest()))
  }

  /// How many leading bytes of the file the digest covers.
  package var count: Int64 { state.withLock { $0.usable ? $0.count : 0 } }

  /// Makes the digest cover the file's first `length` bytes, read from disk, unless it
  /// already does: the prefix a resumed download continues.
  /// - Parameters:
  ///   - file: the partial file.
  ///   - length: its bytes to cover.
  /// - Throws: `CourierError` from reading the file (`fileUnavailable`, `cancelled`).
  package func cover(_ file: URL, length: Int64) throws {
    if count == length { return }
    var stream = hasher.streamingDigest()
    try SwiftFileHasher.read(file, offset: 0, length: length) { stream.update($0) }
    state.withLock { $0 = State(stream: stream, count: length) }
  }

  /// A body is about to be written from byte `offset` of the file.
  /// - Parameter offset: where the transport writes its first byte.
  package func begin(at offset: Int64) {
    let fresh = offset == 0 ? hasher.streamingDigest() : nil
    state.withLock { state in
      if let fresh {
        state = State(stream: fresh)
      } else if !state.usable || state.count != offset {
        state.usable = false
      }
    }
  }

  /// Bytes the transport has just written, following the previous ones.
  /// - Parameter bytes: the bytes.
  package func append(_ bytes: UnsafeRawBufferPointer) {
    state.withLock { state in
      guard state.usable else { return }
      state.stream.update(bytes)
      state.count += Int64(bytes.count)
    }
  }

  /// The digest of the file's first `length` bytes, when it covers exactly them.
  /// - Parameter length: the file's length.
  /// - Returns: the 32-byte digest, or nil when it does not cover exactly `length` bytes.
  package func digest(ofLength length: Int64) -> [UInt8]? {
    state.withLock { state in
      guard state.usable, state.count == length else { return nil }
      state.usable = false
      return state.stream.finalize()
    }
  }

  /// Two are equal when they are the same object.
  package static func == (lhs: ReceivedDigest, rhs: ReceivedDigest) -> Bool { lhs === rhs }
}
