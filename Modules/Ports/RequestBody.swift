import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Array where Element == BodySegment {
  /// The body's total length: what `Content-Length` says.
  package var totalLength: Int64 { reduce(0) { $0 + $1.length } }
}

/// The body of a request, given beside it to `Transport.send`: the one way to send a body,
/// made by ``bytes(_:)``, ``file(_:)`` or ``segments(_:)``. Adapters stream files and segments
/// from disk while sending, so memory stays flat whatever the size; every attempt of a retried
/// call reads the body again from its start. An adapter of your own sends any body as
/// ``segments(context:)`` of ``length`` bytes.
///
/// A struct over a choice of storage only Courier's own modules see (as async-http-client's
/// `HTTPClientRequest.Body` keeps its own internal), so a new kind of body breaks no one who
/// switched over the kinds (decision 2201).
public struct RequestBody: Sendable, Equatable {
  /// Where the bytes come from, for Courier's own adapters (each sends a kind its own way).
  package enum Contents: Sendable, Equatable {
    /// Bytes held in memory.
    case bytes(Data)
    /// The whole content of a file.
    case file(URL)
    /// The concatenation of segments.
    case segments([BodySegment])
  }

  /// Where the bytes come from.
  package let contents: Contents

  private init(_ contents: Contents) { self.contents = contents }

  /// Bytes held in memory (a JSON document, a small form).
  /// - Parameter data: the bytes.
  /// - Returns: the body.
  public static func bytes(_ data: Data) -> RequestBody { RequestBody(.bytes(data)) }

  /// The whole content of a file, read while sending.
  /// - Parameter url: the file.
  /// - Returns: the body.
  public static func file(_ url: URL) -> RequestBody { RequestBody(.file(url)) }

  /// The concatenation of segments (memory and file ranges), read while sending.
  /// - Parameter segments: the segments, in order.
  /// - Returns: the body.
  public static func segments(_ segments: [BodySegment]) -> RequestBody {
    RequestBody(.segments(segments))
  }

  /// The body's length in bytes: what `Content-Length` says; nil for a file that cannot be
  /// read (sending it fails as `fileUnavailable`).
  public var length: Int64? {
    switch contents {
    case .bytes(let data): return Int64(data.count)
    case .segments(let segments): return segments.totalLength
    case .file(let url):
      // stat(2): the size of what reading the file gives, through a symbolic link too.
      var info = stat()
      return stat(url.path, &info) == 0 ? Int64(info.st_size) : nil
    }
  }

  /// The body as segments, a whole file being one range of it.
  /// - Parameter context: the request's summary, named in the error.
  /// - Returns: the segments, in order.
  /// - Throws: `fileUnavailable` naming the file when a whole-file body cannot be read.
  public func segments(context: String) throws -> [BodySegment] {
    switch contents {
    case .bytes(let data): return [.bytes(data)]
    case .segments(let segments): return segments
    case .file(let url):
      guard let size = length else {
        throw CourierError(
          .fileUnavailable, serverMessage: "The file \(url.path) can't be read.",
          context: context)
      }
      return [.file(url, offset: 0, length: size)]
    }
  }
}
