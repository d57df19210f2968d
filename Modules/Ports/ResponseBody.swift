import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The body of a response, beside its `HTTPResponse` head: the bytes a transport read into
/// memory (decompressed, up to its bound) and the trailer fields that followed them, if any. A
/// struct over a private storage rather than `Data`, so that a body streamed to a file can come
/// later without changing the port (decision 2201).
public struct ResponseBody: Sendable, Equatable {
  private enum Storage: Sendable, Equatable {
    case buffered(Data)
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

  /// The body's bytes (empty for no body, a `HEAD` or a 204).
  public var bytes: Data {
    switch storage {
    case .buffered(let data): data
    }
  }
}
