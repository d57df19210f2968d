#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The body of a response, beside its `HTTPResponse` head: today the bytes a transport read
/// into memory (decompressed, up to its bound). A struct over a private storage rather than
/// `Data`, so that a body streamed to a file or one followed by trailers can come later without
/// changing the port (decision 2201).
public struct ResponseBody: Sendable, Equatable {
  private enum Storage: Sendable, Equatable {
    case buffered(Data)
  }

  private var storage: Storage

  /// A body of bytes held in memory.
  /// - Parameter bytes: the bytes, as received and decompressed; empty for no body.
  public init(bytes: Data = Data()) {
    storage = .buffered(bytes)
  }

  /// The body's bytes (empty for no body, a `HEAD` or a 204).
  public var bytes: Data {
    switch storage {
    case .buffered(let data): data
    }
  }
}
