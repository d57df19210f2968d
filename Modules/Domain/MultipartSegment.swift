#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A piece of a body: bytes in memory or a range of a file. A body is a sequence of them with
/// a known total length, so it can be written to a file or streamed without one.
package enum MultipartSegment: Sendable, Equatable {
  /// Bytes in memory.
  case bytes(Data)
  /// `length` bytes of a file from `offset`; `fileSize` is the size the file must still have.
  case file(URL, offset: Int64, length: Int64, fileSize: Int64)

  /// The segment's length in bytes.
  package var length: Int64 {
    switch self {
    case .bytes(let data): return Int64(data.count)
    case .file(_, _, let length, _): return length
    }
  }
}
