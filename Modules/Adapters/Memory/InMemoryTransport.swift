import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport that answers from a script, for unit tests of code that sends requests.
/// Unscripted requests fail loudly with a 599 response naming the request.
public final class InMemoryTransport: Transport {
  /// One scripted outcome.
  package enum Reply: Sendable {
    /// Answer with this response and body.
    case response(HTTPResponse, body: ResponseBody = ResponseBody())
    /// Fail with this error, as if no response came.
    case failure(CourierError)
    /// Compute the answer from the request.
    case handler(@Sendable (HTTPRequest) async throws -> (HTTPResponse, ResponseBody))
  }

  private struct State {
    var replies: [Reply] = []
    var requests: [HTTPRequest] = []
    var bodies: [RequestBody?] = []
    var bytes: [Data?] = []
  }

  private let state = Mutex(State())

  /// Creates a transport with an empty script.
  public init() {}

  /// Adds outcomes to the end of the script, answered in order.
  /// - Parameter replies: the outcomes.
  package func enqueue(_ replies: Reply...) { state.withLock { $0.replies += replies } }

  /// Adds a JSON response to the script.
  /// - Parameters:
  ///   - status: the status.
  ///   - json: the body text.
  ///   - headerFields: extra header fields.
  public func enqueue(
    status: HTTPResponse.Status, json: String = "{}", headerFields: HTTPFields = [:]
  ) {
    var all = headerFields
    if all[.contentType] == nil { all[.contentType] = "application/json" }
    enqueue(
      .response(
        HTTPResponse(status: status, headerFields: all), body: ResponseBody(bytes: Data(json.utf8)))
    )
  }

  /// Adds a failure to the script: the request fails with `error` as if no response came
  /// (`CourierError(.offline)`, a timeout, a reset), before any status.
  /// - Parameter error: the failure.
  public func enqueue(failure error: CourierError) { enqueue(.failure(error)) }

  /// Every request received, in order.
  public var requests: [HTTPRequest] { state.withLock { $0.requests } }

  /// The body given with each request received (nil for none), in the order of `requests`.
  public var bodies: [RequestBody?] { state.withLock { $0.bodies } }

  /// Each request's body as bytes, read whole when the request was received (files and
  /// segments included; nil for no body or an unreadable file), in the order of `requests`.
  /// Meant for tests: a large file body is held in memory.
  package var receivedBodies: [Data?] { state.withLock { $0.bytes } }

  /// The body files of every request sent with a whole-file body, in order.
  package var uploadedFiles: [URL] {
    bodies.compactMap { body in
      if case .file(let url) = body?.contents { return url }
      return nil
    }
  }

  /// How many scripted outcomes are left.
  package var pendingReplies: Int { state.withLock { $0.replies.count } }

  /// Answers with the next scripted outcome, after reporting the whole body as sent.
  /// - Parameters:
  ///   - request: the request, recorded.
  ///   - body: the body, recorded as given (files are not read).
  ///   - options: its `progress` hears of the body's length once; the deadline is ignored.
  /// - Returns: the scripted response and body.
  /// - Throws: the scripted error.
  public func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    try Task.checkCancellation()
    let bytes = body.flatMap { try? Self.read($0) }
    let reply = state.withLock { state -> Reply? in
      state.requests.append(request)
      state.bodies.append(body)
      state.bytes.append(bytes)
      return state.replies.isEmpty ? nil : state.replies.removeFirst()
    }
    if let body, let progress = options.progress {
      let size = body.length ?? 0
      progress(TransferProgress(sent: size, total: size))
    }
    switch reply {
    case .response(let response, let body):
      return try Self.deliver((response, body), to: options.responseSink, request: request)
    case .failure(let error): throw error
    case .handler(let handler):
      return try Self.deliver(
        try await handler(request), to: options.responseSink, request: request)
    case nil:
      return (
        HTTPResponse(status: 599),
        ResponseBody(
          bytes: Data("InMemoryTransport: no reply scripted for \(request.summary)".utf8))
      )
    }
  }

  /// A scripted answer as a transport with a sink gives it: a successful reply's bytes
  /// written to the sink's file where `ResponseSink.placement` says (a 206 whose
  /// `Content-Range` does not start at the sink's offset is refused as the adapters refuse it),
  /// any other kept in memory.
  private static func deliver(
    _ answer: (HTTPResponse, ResponseBody), to sink: ResponseSink?, request: HTTPRequest
  ) throws -> (HTTPResponse, ResponseBody) {
    guard let sink, request.method != .head, answer.1.file == nil,
      let start = try sink.placement(for: answer.0, context: request.summary)
    else { return answer }
    let file = try OpenFile.writing(sink.file.path, truncatingAt: start)
    defer { file.close() }
    sink.digest?.begin(at: start)
    try file.write(contentsOf: answer.1.bytes)
    answer.1.bytes.withUnsafeBytes { sink.digest?.append($0) }
    return (
      answer.0,
      ResponseBody(
        file: sink.file, offset: start, count: Int64(answer.1.bytes.count),
        trailerFields: answer.1.trailerFields)
    )
  }

  /// The whole body, files read now.
  private static func read(_ body: RequestBody) throws -> Data {
    var data = Data()
    for segment in try body.segments(context: "") {
      switch segment.contents {
      case .bytes(let bytes): data.append(bytes)
      case .file(let url, let offset, let length):
        let file = try OpenFile.reading(url.path)
        try file.seek(toOffset: UInt64(offset))
        data.append(try file.read(upToCount: Int(length)))
      }
    }
    return data
  }
}
