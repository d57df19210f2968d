import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The body of a response, beside its `HTTPResponse` head: the bytes a transport read into
/// memory (decompressed, up to its bound), or the file it wrote them to when the call named a
/// `ResponseSink`, and the trailer fields that followed them, if any. A struct over a private
/// storage (decision 2201), so a file-backed body (decision 2500) needs no new port.
public struct ResponseBody: Sendable, Equatable {
  private enum Storage: Sendable, Equatable {
    case buffered(Data)
    /// Written to a file: its path, where this reply's bytes start there, and how many.
    case file(URL, Int64, Int64)
  }

  private var storage: Storage

  /// The trailer fields sent after the body (RFC 9110 §6.5), kept apart from the head's header
  /// fields as the RFC requires: nil when the reply had none, or when its transport cannot see
  /// them (URLSession, decision 2435). Fields a server puts here (a checksum, a gRPC status)
  /// are known only once the whole body has come.
  public let trailerFields: HTTPFields?

  /// A body of bytes held in memory.
  /// - Parameter bytes: the bytes, as received and decompressed; empty for no body.
  public init(bytes: Data = Data()) {
    storage = .buffered(bytes)
    trailerFields = nil
  }

  /// A body of bytes held in memory, followed by trailer fields.
  /// - Parameters:
  ///   - bytes: the bytes, as received and decompressed; empty for no body.
  ///   - trailerFields: the fields of the trailer section; nil for none.
  public init(bytes: Data, trailerFields: HTTPFields?) {
    storage = .buffered(bytes)
    self.trailerFields = trailerFields
  }

  /// A body a transport wrote to its call's `ResponseSink`.
  /// - Parameters:
  ///   - file: the sink's file.
  ///   - offset: where this reply's bytes start in it (a 206's first byte; 0 otherwise).
  ///   - count: the bytes this reply wrote there.
  ///   - trailerFields: the fields of the trailer section; nil for none.
  package init(file: URL, offset: Int64, count: Int64, trailerFields: HTTPFields? = nil) {
    storage = .file(file, offset, count)
    self.trailerFields = trailerFields
  }

  /// The body's bytes held in memory (empty for no body, a `HEAD` or a 204). Empty too for a
  /// body written to a file (``file``): it is never read back into memory behind the caller's
  /// back, whatever its size.
  public var bytes: Data {
    switch storage {
    case .buffered(let data): data
    case .file: Data()
    }
  }

  /// The file the body was written to, when the call named a `ResponseSink` and the reply was
  /// successful; nil for a body held in memory. ``count`` bytes of this reply are in it.
  public var file: URL? {
    switch storage {
    case .buffered: nil
    case .file(let url, _, _): url
    }
  }

  /// Where this reply's bytes are in ``file`` (a 206 continues a partial file); nil for a body
  /// held in memory.
  package var fileRange: (offset: Int64, length: Int64)? {
    switch storage {
    case .buffered: nil
    case .file(_, let offset, let count): (offset, count)
    }
  }

  /// The body's length in bytes, in memory or written to ``file`` by this reply.
  public var count: Int64 {
    switch storage {
    case .buffered(let data): Int64(data.count)
    case .file(_, _, let count): count
    }
  }
}
