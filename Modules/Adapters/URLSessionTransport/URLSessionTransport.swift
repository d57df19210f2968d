import CourierDomain
import CourierPorts
import CourierSystem
import Foundation
import HTTPTypes
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The `Transport` port over URLSession (FoundationNetworking on Linux, libcurl underneath).
///
/// What it does about URLSession on Linux (see Docs/decisions): bodies from files go through
/// `uploadTask(with:fromFile:)`, never `httpBodyStream`; the caller's overall deadline is
/// enforced here because URLSession only has an idle timeout; cancellation answers at once
/// even when libcurl is slow to stop; URLSession's own cache and cookies are off, so ETags
/// and sessions are the pipeline's business. It never logs anything, headers included.
///
/// What FoundationNetworking keeps it from doing on Linux (decision 2435): a reply with
/// trailer fields after a chunked body stops the process there, before any of this adapter's
/// code runs; a status line that ends at its code (`HTTP/1.1 200`) is refused as a bad reply;
/// and only the status code reaches the adapter, so a status line that is not HTTP's
/// (`Http/1.1 200 OK`) goes unnoticed. `CurlTransport`, the default on Linux, has none of these
/// limits: choose it for servers you do not control.
public final class URLSessionTransport: Transport {
  private let session: URLSession
  private let router: TaskRouter
  private let pathStatus: @Sendable () -> PathStatus
  private let maxResponseBytes: Int

  /// Creates a transport with its own session (connections are reused across requests).
  /// - Parameters:
  ///   - pathStatus: the path monitor's current status, used to tell "offline" from "host
  ///     unreachable" since Linux never reports −1009.
  ///   - maxResponseBytes: the largest response body held in memory.
  ///   - idleTimeout: URLSession's idle timeout per request.
  public init(
    pathStatus: @escaping @Sendable () -> PathStatus = { .unknown },
    maxResponseBytes: Int = 64 << 20, idleTimeout: TimeInterval = 60
  ) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.timeoutIntervalForRequest = idleTimeout
    configuration.httpMaximumConnectionsPerHost = 6
    let router = TaskRouter()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    self.router = router
    self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    self.pathStatus = pathStatus
    self.maxResponseBytes = maxResponseBytes
  }

  deinit { session.invalidateAndCancel() }

  /// Sends a request with its body. Bytes go in the request; a file goes through
  /// `uploadTask(with:fromFile:)`, streamed by libcurl from disk; segments are first copied,
  /// a chunk at a time, into a temporary file removed when the call ends (URLSession has no
  /// flat-memory way to send several sources, and `httpBodyStream` is unreliable on Linux).
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body; nil for none.
  ///   - options: the per-attempt deadline and the progress observer.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: `CourierError` when a file is unreadable, `invalidResponse` for a reply that is
  ///   not valid HTTP, or when no response was received.
  public func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    if options.responseSink != nil && request.method != .head {
      // Its data task holds the body in memory; a download task writes where it likes and
      // cannot continue a partial file at an offset (decision 2500).
      throw CourierError(
        .invalidInput, code: "response_sink_unsupported",
        serverMessage:
          "The urlsession transport cannot write a response to a file as it arrives; "
          + "choose the curl transport (the default on Linux).",
        context: request.summary)
    }
    switch body?.contents {
    case nil, .bytes:
      var data: Data?
      if case .bytes(let bytes) = body?.contents { data = bytes }
      return try await RedirectFollowing.run(request, deadline: options.deadline) { hop in
        var prepared = try Self.urlRequest(for: hop.request, idleTimeout: options.idleTimeout)
        if hop.sendsBody { prepared.httpBody = data }
        let urlRequest = prepared
        let progress = hop.sendsBody && data != nil ? options.progress : nil
        return try await perform(hop.request, deadline: hop.deadline, progress: progress) {
          session in session.dataTask(with: urlRequest)
        }
      }
    case .file(let file):
      return try await upload(request, file: file, options: options)
    case .segments(let segments):
      let file = try await SegmentSpooler.spoolOffPool(segments, context: request.summary)
      defer { try? FileManager.default.removeItem(at: file) }
      if Task.isCancelled { throw CourierError(.cancelled, context: request.summary) }
      return try await upload(request, file: file, options: options)
    }
  }

  private func upload(
    _ request: HTTPRequest, file: URL, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    guard FileManager.default.isReadableFile(atPath: file.path) else {
      throw CourierError(
        .fileUnavailable, serverMessage: "The file \(file.path) can't be read.",
        context: request.summary)
    }
    return try await RedirectFollowing.run(request, deadline: options.deadline) { hop in
      let urlRequest = try Self.urlRequest(for: hop.request, idleTimeout: options.idleTimeout)
      return try await perform(
        hop.request, deadline: hop.deadline, progress: hop.sendsBody ? options.progress : nil
      ) { session in
        hop.sendsBody
          ? session.uploadTask(with: urlRequest, fromFile: file)
          : session.dataTask(with: urlRequest)
      }
    }
  }

  /// The `URLRequest` for a request; `idleTimeout` becomes its own `timeoutInterval`, which
  /// URLSession (on Linux too) counts from the last byte that moved, in whole seconds.
  /// - Throws: `invalidInput` for a request without an absolute URL.
  static func urlRequest(
    for request: HTTPRequest, idleTimeout: Duration? = nil
  ) throws -> URLRequest {
    guard let url = request.url else {
      throw CourierError(
        .invalidInput, serverMessage: "The request has no absolute URL.",
        context: request.summary)
    }
    var urlRequest = URLRequest(url: url)
    urlRequest.httpMethod = request.method.rawValue
    urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
    if let idleTimeout {
      urlRequest.timeoutInterval = max(1, idleTimeout.seconds.rounded(.up))
    }
    for field in request.headerFields {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
    }
    return urlRequest
  }

  private func perform(
    _ request: HTTPRequest, deadline: Duration?,
    progress: (@Sendable (TransferProgress) -> Void)?,
    makeTask: @escaping @Sendable (URLSession) -> URLSessionTask
  ) async throws -> (HTTPResponse, ResponseBody) {
    try Task.checkCancellation()
    let exchange = Exchange(
      context: request.summary, maxBytes: maxResponseBytes, pathStatus: pathStatus,
      progress: progress)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        exchange.start(continuation)
        let task = makeTask(session)
        router.register(task, exchange)
        exchange.attach(task)
        if let deadline {
          let nanos = Int(min(deadline.seconds, 86_400) * 1e9)
          DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
            exchange.fail(
              CourierError(
                .timedOut, mayHaveReachedServer: true,
                underlying: "overall deadline of \(deadline) passed", context: request.summary))
          }
        }
        task.resume()
        // A cancellation that came before the task existed is honoured now.
        if Task.isCancelled { exchange.cancel() }
      }
    } onCancel: {
      exchange.cancel()
    }
  }
}

/// Copies a segmented body into one temporary file, a chunk at a time, so URLSession can
/// stream it from disk with memory flat.
enum SegmentSpooler {
  static let chunkSize = 256 * 1024

  /// `spool` on a dispatch thread, so copying a large file never holds a thread of the
  /// concurrency pool (two on a two-core machine) for the whole copy.
  static func spoolOffPool(_ segments: [BodySegment], context: String) async throws -> URL {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .utility).async {
        continuation.resume(with: Result { try spool(segments, context: context) })
      }
    }
  }

  /// Writes the segments, in order, to a new private temporary file.
  /// - Returns: the file; the caller removes it.
  /// - Throws: `invalidInput` for a negative range, `fileUnavailable` naming the file when a
  ///   range cannot be read in full or the temporary file cannot be written.
  static func spool(_ segments: [BodySegment], context: String) throws -> URL {
    // Named as Core's `CourierTemporaryFile` names a multipart body (`<kind><pid>-<uuid>.<ext>`),
    // so the next upload's sweep removes what a killed process left here.
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-multipart-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).body")
    guard
      FileManager.default.createFile(
        atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]),
      let output = try? FileHandle(forWritingTo: url)
    else {
      throw CourierError(
        .fileUnavailable,
        serverMessage: "The temporary file for the upload couldn't be created in "
          + "\(url.deletingLastPathComponent().path).", context: context)
    }
    do {
      defer { try? output.close() }
      for segment in segments {
        switch segment.contents {
        case .bytes(let data):
          try output.write(contentsOf: data)
        case .file(let file, let offset, let length):
          try copy(file, offset: offset, length: length, to: output, context: context)
        }
      }
      return url
    } catch {
      try? FileManager.default.removeItem(at: url)
      throw error
    }
  }

  private static func copy(
    _ file: URL, offset: Int64, length: Int64, to output: FileHandle, context: String
  ) throws {
    guard offset >= 0, length >= 0 else {
      throw CourierError(
        .invalidInput, serverMessage: "The range \(offset)+\(length) of \(file.path) is negative.",
        context: context)
    }
    guard let input = try? FileHandle(forReadingFrom: file) else {
      throw CourierError(
        .fileUnavailable, serverMessage: "The file \(file.path) can't be read.", context: context)
    }
    defer { try? input.close() }
    try input.seek(toOffset: UInt64(offset))
    var left = length
    while left > 0 {
      let chunk = try input.read(upToCount: Int(min(left, Int64(chunkSize))))
      guard let chunk, !chunk.isEmpty else {
        throw CourierError(
          .fileUnavailable,
          serverMessage: "The file \(file.path) is shorter than the range \(offset)+\(length).",
          context: context)
      }
      try output.write(contentsOf: chunk)
      left -= Int64(chunk.count)
    }
  }
}

/// One request in flight: collects the response and resumes its caller exactly once, whichever
/// of completion, deadline or cancellation comes first.
private final class Exchange: Sendable {
  private struct State {
    var continuation: CheckedContinuation<(HTTPResponse, ResponseBody), any Error>?
    var task: URLSessionTask?
    var response: HTTPURLResponse?
    var body = Data()
    var finished = false
    var cancelRequested = false
  }

  let context: String
  let maxBytes: Int
  let pathStatus: @Sendable () -> PathStatus
  let progress: (@Sendable (TransferProgress) -> Void)?
  private let state = Mutex(State())

  init(
    context: String, maxBytes: Int, pathStatus: @escaping @Sendable () -> PathStatus,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) {
    self.context = context
    self.maxBytes = maxBytes
    self.pathStatus = pathStatus
    self.progress = progress
  }

  func start(_ continuation: CheckedContinuation<(HTTPResponse, ResponseBody), any Error>) {
    state.withLock { $0.continuation = continuation }
  }

  func attach(_ task: URLSessionTask) {
    let cancelNow = state.withLock { state -> Bool in
      state.task = task
      return state.cancelRequested
    }
    if cancelNow { task.cancel() }
  }

  func cancel() {
    let task = state.withLock { state -> URLSessionTask? in
      state.cancelRequested = true
      return state.task
    }
    finish(.failure(CourierError(.cancelled, context: context)))
    Self.cancelElsewhere(task)
  }

  func fail(_ error: CourierError) {
    let task = state.withLock { $0.task }
    finish(.failure(error))
    Self.cancelElsewhere(task)
  }

  /// Cancels a task off the caller's queue. `URLSessionTask.cancel()` waits (`sync`) for the
  /// session's work queue, which is busy inside libcurl for as long as one read lasts; with a
  /// gzip bomb that read inflates gigabytes. Called on the delegate queue, the wait would stop
  /// the queue while libcurl keeps enqueuing every inflated chunk on it: the whole bomb would
  /// end up in memory. Off the queue, the delegate keeps dropping chunks as they come.
  private static func cancelElsewhere(_ task: URLSessionTask?) {
    guard let task else { return }
    let box = LockedTask(task)
    DispatchQueue.global().async { box.cancel() }
  }

  func received(_ response: URLResponse) {
    state.withLock { $0.response = response as? HTTPURLResponse }
  }

  func received(_ data: Data) {
    let tooLarge = state.withLock { state -> Bool in
      guard !state.finished else { return false }
      state.body.append(data)
      return state.body.count > maxBytes
    }
    if tooLarge {
      fail(
        CourierError(
          .invalidResponse, mayHaveReachedServer: true,
          underlying: "response body over \(maxBytes) bytes", context: context))
    }
  }

  func sent(_ sent: Int64, of total: Int64) {
    progress?(TransferProgress(sent: sent, total: total))
  }

  func completed(_ error: (any Error)?) {
    let (response, body) = state.withLock { ($0.response, $0.body) }
    let fields = response.map(Self.fields) ?? []
    if let error {
      let nsError = error as NSError
      let outcome = TransportErrorTable.classify(
        urlErrorCode: nsError.domain == NSURLErrorDomain ? nsError.code : -1,
        message: nsError.localizedDescription,
        offline: pathStatus() == .unsatisfied)
      if outcome.code == TransportErrorTable.Outcome.truncatedReply.code,
        let conflict = HTTPResponse.receivedLengthConflict(in: fields)
      {
        // Cut short of the length libcurl went by, one of several the head gave (decision 2434).
        finish(.failure(CourierError.lengthConflict(conflict, context: context)))
        return
      }
      finish(
        .failure(
          CourierError(
            CourierError.Kind(transportFailure: outcome.kind), code: outcome.code,
            mayHaveReachedServer: outcome.mayHaveReachedServer,
            underlying: "URLError \(nsError.code): \(nsError.localizedDescription)",
            context: context)))
      return
    }
    guard let response else {
      finish(
        .failure(
          CourierError(
            .invalidResponse, mayHaveReachedServer: true, underlying: "no HTTP response",
            context: context)))
      return
    }
    finish(
      Result { () throws(CourierError) in
        (
          try HTTPResponse(
            receivedStatus: response.statusCode, fields: fields, context: context),
          ResponseBody(bytes: body)
        )
      }.mapError { $0 as any Error })
  }

  /// A response's header fields as FoundationNetworking keeps them (one per name, repeated
  /// fields joined with `, `).
  private static func fields(_ response: HTTPURLResponse) -> [(name: String, value: String)] {
    response.allHeaderFields.map { name, value in
      (name: String(describing: name), value: String(describing: value))
    }
  }

  private func finish(_ result: Result<(HTTPResponse, ResponseBody), any Error>) {
    let continuation = state.withLock {
      state -> CheckedContinuation<(HTTPResponse, ResponseBody), any Error>? in
      guard !state.finished else { return nil }
      state.finished = true
      state.body = Data()
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: result)
  }
}

/// A task handed to another queue for `cancel()`, behind a lock (`URLSessionTask` is not
/// `Sendable` in swift-corelibs-foundation).
private final class LockedTask: Sendable {
  private let task: Mutex<URLSessionTask>

  init(_ task: sending URLSessionTask) { self.task = Mutex(task) }

  func cancel() { task.withLock { $0.cancel() } }
}

/// The session's delegate: routes each callback to its task's exchange.
private final class TaskRouter: NSObject, URLSessionDataDelegate, Sendable {
  private let exchanges = Mutex<[Int: Exchange]>([:])

  func register(_ task: URLSessionTask, _ exchange: Exchange) {
    exchanges.withLock { $0[task.taskIdentifier] = exchange }
  }

  private func exchange(_ task: URLSessionTask) -> Exchange? {
    exchanges.withLock { $0[task.taskIdentifier] }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    exchange(dataTask)?.received(response)
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    exchange(dataTask)?.received(data)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    exchange(task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    // Never followed here: URLSession on Linux drops the body of a 307/308. The 3xx comes
    // back as the response and `RedirectFollowing` decides (same origin only, decision 0503).
    completionHandler(nil)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    exchange?.completed(error)
  }
}
