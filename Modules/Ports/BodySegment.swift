import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One piece of a request body: bytes held in memory, or a range of a file read when sent.
/// A multipart body is its boundaries and headers as `bytes` with each file as a `file` range,
/// so it never needs a temporary copy on disk.
public enum BodySegment: Sendable, Equatable {
  /// Bytes in memory.
  case bytes(Data)
  /// `length` bytes of a file starting at `offset`, read while sending.
  case file(URL, offset: Int64, length: Int64)

  /// The number of bytes this segment contributes to the body.
  public var length: Int64 {
    switch self {
    case .bytes(let data): return Int64(data.count)
    case .file(_, _, let length): return length
    }
  }
}
