import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// A transport that answers from a script, for unit tests of code that sends requests.
/// Unscripted requests fail loudly with a 599 response naming the request.
public final class InMemoryTransport: Transport {
  /// One scripted outcome.
  public enum Reply: Sendable {
    /// Answer with this response.
    case response(HTTPResponse)
    /// Fail with this error, as if no response came.
    case failure(CourierError)
    /// Compute the answer from the request.
    case handler(@Sendable (HTTPRequest) async throws -> HTTPResponse)
  }

  private struct State {
    var replies: [Reply] = []
    var requests: [HTTPRequest] = []
    var uploads: [URL] = []
  }

  private let state = Mutex(State())

  /// Creates a transport with an empty script.
  public init() {}

  /// Adds outcomes to the end of the script, answered in order.
  /// - Parameter replies: the outcomes.
  public func enqueue(_ replies: Reply...) { state.withLock { $0.replies += replies } }

  /// Adds a JSON response to the script.
  /// - Parameters:
  ///   - status: the status.
  ///   - json: the body text.
  ///   - headers: extra headers.
  public func enqueue(status: Int, json: String = "{}", headers: HTTPHeaders = [:]) {
    var all = headers
    if all["Content-Type"] == nil { all["Content-Type"] = "application/json" }
    enqueue(.response(HTTPResponse(status: status, headers: all, body: Data(json.utf8))))
  }

  /// Every request received, in order.
  public var requests: [HTTPRequest] { state.withLock { $0.requests } }

  /// The body files of every upload received, in order.
  public var uploadedFiles: [URL] { state.withLock { $0.uploads } }

  /// How many scripted outcomes are left.
  public var pendingReplies: Int { state.withLock { $0.replies.count } }

  /// Answers with the next scripted outcome.
  /// - Parameters:
  ///   - request: the request, recorded.
  ///   - options: ignored.
  /// - Returns: the scripted response.
  /// - Throws: the scripted error.
  public func send(_ request: HTTPRequest, options: TransportOptions) async throws -> HTTPResponse {
    try Task.checkCancellation()
    let reply = state.withLock { state -> Reply? in
      state.requests.append(request)
      return state.replies.isEmpty ? nil : state.replies.removeFirst()
    }
    switch reply {
    case .response(let response): return response
    case .failure(let error): throw error
    case .handler(let handler): return try await handler(request)
    case nil:
      return HTTPResponse(
        status: 599, body: Data("InMemoryTransport: no reply scripted for \(request.summary)".utf8))
    }
  }

  /// Answers an upload like `send`, reporting the file's size as sent.
  /// - Parameters:
  ///   - request: the request, recorded.
  ///   - file: the body file, recorded.
  ///   - options: ignored.
  ///   - progress: called once with the whole size.
  /// - Returns: the scripted response.
  /// - Throws: the scripted error.
  public func upload(
    _ request: HTTPRequest, bodyFile file: URL, options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    state.withLock { $0.uploads.append(file) }
    let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
    let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    progress(TransferProgress(sent: size, total: size))
    return try await send(request, options: options)
  }
}
