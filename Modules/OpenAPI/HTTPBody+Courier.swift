import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension HTTPBody {
  /// The body of a response as swift-openapi-runtime's transports give it: none for a `HEAD`,
  /// a 1xx, a 204 or a 304 (so the generated client's no-content cases decode), otherwise the
  /// bytes, empty ones included.
  /// - Parameters:
  ///   - received: what Courier's transport read.
  ///   - response: the response it came with.
  ///   - method: the request's method.
  /// - Returns: the body, or nil for none.
  static func of(
    _ received: ResponseBody, response: HTTPResponse, method: HTTPRequest.Method
  ) -> HTTPBody? {
    if method == .head || response.status.kind == .informational
      || response.status == .noContent || response.status == .notModified
    {
      return nil
    }
    if let file = received.file, let range = received.fileRange {
      // Read from the file a chunk at a time when iterated, never loaded whole.
      let segments = [BodySegment.file(file, offset: range.offset, length: range.length)]
      return HTTPBody(
        SegmentBytes(segments: segments, context: "\(method.rawValue) response"),
        length: .known(range.length), iterationBehavior: .multiple)
    }
    return HTTPBody(received.bytes)
  }

  /// A request body as an `HTTPBody` that can be read any number of times, of known length,
  /// read only when iterated (a middleware that never looks at it costs no copy): bytes as
  /// they are, files and segments from disk a chunk at a time, so a middleware that reads a
  /// photo's body does not hold it in memory.
  /// - Parameters:
  ///   - body: Courier's body.
  ///   - context: the request's summary, named in errors.
  /// - Returns: the body.
  /// - Throws: `CourierError.fileUnavailable` when a whole-file body cannot be read.
  static func of(_ body: RequestBody, context: String) throws -> HTTPBody {
    let segments = try body.segments(context: context)
    return HTTPBody(
      SegmentBytes(segments: segments, context: context), length: .known(segments.totalLength),
      iterationBehavior: .multiple)
  }
}

/// The bytes of a list of segments, read in chunks: memory segments as they are, file ranges
/// 64 KiB at a time, each iteration from the start.
struct SegmentBytes: AsyncSequence, Sendable {
  typealias Element = HTTPBody.ByteChunk

  let segments: [BodySegment]
  let context: String
  static let chunkSize = 64 << 10

  func makeAsyncIterator() -> Iterator { Iterator(segments: segments, context: context) }

  struct Iterator: AsyncIteratorProtocol {
    private var pending: ArraySlice<BodySegment>
    private let context: String
    /// The file being read and the bytes of its range still to read.
    private var reading: (file: OpenFile, url: URL, left: Int64)?

    init(segments: [BodySegment], context: String) {
      pending = segments[...]
      self.context = context
    }

    mutating func next() async throws -> HTTPBody.ByteChunk? {
      while true {
        if let (file, url, left) = reading {
          guard left > 0 else {
            file.close()
            reading = nil
            continue
          }
          let data: Data
          do {
            data = try file.read(upToCount: Int(Swift.min(left, Int64(SegmentBytes.chunkSize))))
          } catch {
            throw unreadable(url)
          }
          guard !data.isEmpty else { throw unreadable(url) }
          reading = (file, url, left - Int64(data.count))
          return HTTPBody.ByteChunk(data)
        }
        guard let segment = pending.popFirst() else { return nil }
        switch segment.contents {
        case .bytes(let data):
          if !data.isEmpty { return HTTPBody.ByteChunk(data) }
        case .file(let url, let offset, let length):
          guard offset >= 0, length >= 0 else { throw unreadable(url) }
          guard length > 0 else { continue }
          do {
            let file = try OpenFile.reading(url.path)
            try file.seek(toOffset: UInt64(offset))
            reading = (file, url, length)
          } catch {
            throw unreadable(url)
          }
        }
      }
    }

    private func unreadable(_ url: URL) -> CourierError {
      CourierError(
        .fileUnavailable, serverMessage: "The file \(url.path) can't be read.", context: context)
    }
  }
}
