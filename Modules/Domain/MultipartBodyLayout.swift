#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A body laid out as segments with a known total length, and the header that goes with it.
package struct MultipartBodyLayout: Sendable, Equatable {
  /// The boundary the body uses.
  package let boundary: MultipartBoundary
  /// The segments, in order; adjacent in-memory bytes are already merged.
  package let segments: [MultipartSegment]

  /// Creates a layout.
  /// - Parameters:
  ///   - boundary: the boundary.
  ///   - segments: the segments.
  package init(boundary: MultipartBoundary, segments: [MultipartSegment]) {
    self.boundary = boundary
    self.segments = segments
  }

  /// The total length in bytes: the `Content-Length` to send.
  package var contentLength: Int64 { segments.reduce(0) { $0 + $1.length } }

  /// The `Content-Type` header value, carrying the same boundary.
  package var contentType: String { "multipart/form-data; boundary=\(boundary.parameterValue)" }

  /// Whether every byte is already in memory (no file to read).
  package var isInMemory: Bool {
    segments.allSatisfy { if case .bytes = $0 { true } else { false } }
  }

  /// The whole body, when every segment is in memory.
  package var inMemoryBody: Data? {
    guard isInMemory else { return nil }
    var body = Data()
    body.reserveCapacity(Int(contentLength))
    for case .bytes(let data) in segments { body.append(data) }
    return body
  }
}
