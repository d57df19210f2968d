import CourierDomain
import Foundation

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

extension Array where Element == BodySegment {
  /// The body's total length: what `Content-Length` says.
  public var totalLength: Int64 { reduce(0) { $0 + $1.length } }
}

/// A transport that can stream a body made of segments straight from their sources, with a
/// known total length, and report progress. An optional capability: callers check for it with
/// `as? any SegmentedBodyTransport` and otherwise write the body to a file for `upload`.
public protocol SegmentedBodyTransport: Transport {
  /// Sends a request whose body is the concatenation of `segments`.
  /// - Parameters:
  ///   - request: the request; its `body` is ignored.
  ///   - segments: the body's pieces, in order.
  ///   - options: deadline and other per-call options.
  ///   - progress: called with bytes sent so far, from any thread.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` (`fileUnavailable` naming the file when a file range cannot be
  ///   read in full) when no response was received.
  func upload(
    _ request: HTTPRequest, segments: [BodySegment], options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse
}
