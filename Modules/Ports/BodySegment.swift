import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One piece of a request body: bytes held in memory, or a range of a file read when sent.
/// A multipart body is its boundaries and headers as bytes with each file as a file range, so
/// it never needs a temporary copy on disk.
///
/// A struct over a private storage, so that a kind of segment added later breaks no one: a
/// transport of your own reads any segment with ``read(chunkSize:_:)``.
public struct BodySegment: Sendable, Equatable {
  /// Where the bytes are, for Courier's own adapters (each sends a kind its own way).
  package enum Contents: Sendable, Equatable {
    /// Bytes in memory.
    case bytes(Data)
    /// `length` bytes of a file starting at `offset`.
    case file(URL, offset: Int64, length: Int64)
  }

  /// Where the bytes are.
  package let contents: Contents

  private init(_ contents: Contents) { self.contents = contents }

  /// Bytes held in memory.
  /// - Parameter data: the bytes.
  /// - Returns: the segment.
  public static func bytes(_ data: Data) -> BodySegment { BodySegment(.bytes(data)) }

  /// `length` bytes of a file from `offset`, read while sending.
  /// - Parameters:
  ///   - url: the file.
  ///   - offset: the first byte.
  ///   - length: how many bytes.
  /// - Returns: the segment.
  public static func file(_ url: URL, offset: Int64, length: Int64) -> BodySegment {
    BodySegment(.file(url, offset: offset, length: length))
  }

  /// The number of bytes this segment contributes to the body.
  public var length: Int64 {
    switch contents {
    case .bytes(let data): return Int64(data.count)
    case .file(_, _, let length): return length
    }
  }

  /// Reads the segment's bytes in order, in pieces of at most `chunkSize` bytes: how a
  /// transport of your own sends any segment without holding a file in memory.
  /// - Parameters:
  ///   - chunkSize: the largest piece handed to `body`.
  ///   - body: receives each piece in turn.
  /// - Throws: what `body` throws, or `CourierError` `fileUnavailable` naming the file when it
  ///   cannot be read or ends before the range does.
  public func read(chunkSize: Int = 256 * 1024, _ body: (Data) throws -> Void) throws {
    switch contents {
    case .bytes(let data):
      var start = data.startIndex
      while start < data.endIndex {
        let end = data.index(start, offsetBy: max(1, chunkSize), limitedBy: data.endIndex)
        try body(data[start..<(end ?? data.endIndex)])
        start = end ?? data.endIndex
      }
    case .file(let url, let offset, let length):
      let file: OpenFile
      do {
        file = try OpenFile.reading(url.path)
        try file.seek(toOffset: UInt64(offset))
      } catch {
        throw Self.unreadable(url, String(describing: error))
      }
      var left = length
      while left > 0 {
        let piece: Data
        do {
          piece = try file.read(upToCount: Int(min(Int64(max(1, chunkSize)), left)))
        } catch {
          throw Self.unreadable(url, String(describing: error))
        }
        guard !piece.isEmpty else { throw Self.unreadable(url, "the file ended early") }
        try body(piece)
        left -= Int64(piece.count)
      }
    }
  }

  private static func unreadable(_ url: URL, _ why: String) -> CourierError {
    CourierError(
      .fileUnavailable, serverMessage: "The file \(url.path) can't be read.", underlying: why)
  }
}
