import CourierDomain
import CourierPorts
import Foundation

/// A multipart body ready to send: in memory when small, otherwise a temporary file that this
/// value owns. Call `remove()` when done (or use `MultipartBodyWriter.withBody`, which does).
public struct MultipartBody: Sendable, Equatable {
  /// Where the bytes are.
  public enum Storage: Sendable, Equatable {
    /// The whole body in memory.
    case memory(Data)
    /// The whole body in a temporary file owned by this value.
    case file(URL)
  }

  /// Where the bytes are.
  public let storage: Storage
  /// The `Content-Type` header value, with the boundary.
  public let contentType: String
  /// The body's length in bytes.
  public let contentLength: Int64

  /// Creates a body.
  /// - Parameters:
  ///   - storage: where the bytes are.
  ///   - contentType: the `Content-Type` value.
  ///   - contentLength: the length.
  public init(storage: Storage, contentType: String, contentLength: Int64) {
    self.storage = storage
    self.contentType = contentType
    self.contentLength = contentLength
  }

  /// The temporary file, when the body is on disk.
  public var fileURL: URL? {
    if case .file(let url) = storage { return url }
    return nil
  }

  /// Deletes the temporary file, if any. Safe to call more than once.
  public func remove() {
    guard let url = fileURL else { return }
    try? FileManager.default.removeItem(at: url)
  }

  /// The request with this body's `Content-Type` and, for an in-memory body, its bytes.
  /// - Parameter request: the request to complete.
  /// - Returns: the completed request.
  public func applied(to request: HTTPRequest) -> HTTPRequest {
    var request = request
    request.headers["Content-Type"] = contentType
    if case .memory(let data) = storage {
      request.body = data
    } else {
      request.body = nil
    }
    return request
  }

  /// Sends the body with a request: `send` for an in-memory body, the transport's from-file
  /// `upload` otherwise, so memory stays flat for a large body.
  /// - Parameters:
  ///   - request: the request (method, URL, other headers).
  ///   - transport: the transport.
  ///   - options: per-call options.
  ///   - progress: called with bytes sent so far.
  /// - Returns: the response, of any status.
  /// - Throws: what the transport throws.
  public func send(
    _ request: HTTPRequest, through transport: any Transport,
    options: TransportOptions = TransportOptions(),
    progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }
  ) async throws -> HTTPResponse {
    let prepared = applied(to: request)
    switch storage {
    case .memory:
      let response = try await transport.send(prepared, options: options)
      progress(TransferProgress(sent: contentLength, total: contentLength))
      return response
    case .file(let url):
      return try await transport.upload(
        prepared, bodyFile: url, options: options, progress: progress)
    }
  }
}
