import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A multipart body ready to send: in memory when small, otherwise a temporary file that this
/// value owns. Call `remove()` when done (or use `MultipartBodyWriter.withBody`, which does).
package struct MultipartBody: Sendable, Equatable {
  /// Where the bytes are.
  package enum Storage: Sendable, Equatable {
    /// The whole body in memory.
    case memory(Data)
    /// The whole body in a temporary file owned by this value.
    case file(URL)
  }

  /// Where the bytes are.
  package let storage: Storage
  /// The `Content-Type` header value, with the boundary.
  package let contentType: String
  /// The body's length in bytes.
  package let contentLength: Int64

  /// Creates a body.
  /// - Parameters:
  ///   - storage: where the bytes are.
  ///   - contentType: the `Content-Type` value.
  ///   - contentLength: the length.
  package init(storage: Storage, contentType: String, contentLength: Int64) {
    self.storage = storage
    self.contentType = contentType
    self.contentLength = contentLength
  }

  /// The temporary file, when the body is on disk.
  package var fileURL: URL? {
    if case .file(let url) = storage { return url }
    return nil
  }

  /// Deletes the temporary file, if any. Safe to call more than once.
  package func remove() {
    guard let url = fileURL else { return }
    try? FileManager.default.removeItem(at: url)
  }

  /// The body as the transport port takes it: bytes in memory, or the temporary file.
  package var requestBody: RequestBody {
    switch storage {
    case .memory(let data): return .bytes(data)
    case .file(let url): return .file(url)
    }
  }

  /// The request with this body's `Content-Type`.
  /// - Parameter request: the request to complete.
  /// - Returns: the completed request.
  package func applied(to request: HTTPRequest) -> HTTPRequest {
    var request = request
    request.headerFields[.contentType] = contentType
    return request
  }

  /// Sends the body with a request; a file body is streamed from disk, so memory stays flat
  /// for a large body.
  /// - Parameters:
  ///   - request: the request (method, URL, other headers).
  ///   - transport: the transport.
  ///   - options: per-call options, progress included.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: what the transport throws.
  package func send(
    _ request: HTTPRequest, through transport: any Transport,
    options: TransportOptions = TransportOptions()
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await transport.send(applied(to: request), body: requestBody, options: options)
  }
}
