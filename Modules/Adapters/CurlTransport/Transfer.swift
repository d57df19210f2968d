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

/// Where a response body goes.
enum BodyDestination: Sendable {
  /// Into memory, up to the configured bound.
  case memory
  /// Into a file, replaced atomically when the response is complete.
  case file(URL)
  /// A successful reply's body into the caller's file, where `ResponseSink.placement` says;
  /// any other reply's into memory.
  case sink(ResponseSink)
}

/// What a transfer answers: the response and its body.
typealias CurlAnswer = (HTTPResponse, ResponseBody)

/// One request as the caller sees it: what to send, and a continuation resumed exactly once,
/// by whichever comes first of completion (on the transport's thread), deadline or cancellation
/// (on the caller's side). The easy handle doing the work lives on the transport's thread only.
final class Transfer: Sendable {
  private struct State {
    var continuation: CheckedContinuation<CurlAnswer, any Error>?
    var finished = false
    var cancelled = false
    var deadline: ContinuousClock.Instant?
  }

  let method: HTTPRequest.Method
  let url: String
  let headerLines: [String]
  let hasExpectHeader: Bool
  let body: [BodySegment]?
  let bodyLength: Int64
  let sink: BodyDestination
  let timeout: Duration?
  /// The longest the transfer may go with nothing sent or received (`TransportOptions.idleTimeout`).
  let idleTimeout: Duration?
  /// Whether a body of the size that asks first is sent after `Expect: 100-continue`
  /// (`CurlTransport.asksToContinue`); false skips the round trip.
  let asksToContinue: Bool
  let progress: (@Sendable (TransferProgress) -> Void)?
  /// Told each interim response but `100` (`TransportOptions.informational`).
  let informational: (@Sendable (HTTPResponse) -> Void)?
  let pathStatus: @Sendable () -> PathStatus
  let context: String
  private let state = Mutex(State())

  /// Checks what libcurl would otherwise be told blindly: the scheme and the host. (No field
  /// can smuggle a second header line: `HTTPFields` keeps no CR, LF or NUL in a value.)
  init(
    request: HTTPRequest, body: [BodySegment]?, sink: BodyDestination, deadline: Duration?,
    idleTimeout: Duration? = nil, asksToContinue: Bool = true,
    progress: (@Sendable (TransferProgress) -> Void)?,
    informational: (@Sendable (HTTPResponse) -> Void)? = nil,
    pathStatus: @escaping @Sendable () -> PathStatus
  ) throws {
    let context = request.summary
    guard let scheme = request.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let authority = request.authority, !authority.isEmpty
    else {
      let target = "\(request.scheme ?? "")://\(request.authority ?? "")\(request.path ?? "")"
      throw CourierError(
        .invalidInput,
        serverMessage: "Only http and https URLs can be requested, not “\(target)”.",
        context: context)
    }
    var lines: [String] = []
    var expect = false
    for field in request.headerFields {
      let name = field.name
      // The transport owns the framing of the body.
      if name == .contentLength || name == .transferEncoding { continue }
      if name == .expect { expect = true }
      let value = Self.trimmed(field.value)
      lines.append(value.isEmpty ? "\(name.rawName);" : "\(name.rawName): \(value)")
    }
    self.method = request.method
    self.url = "\(scheme)://\(authority)\(request.path ?? "/")"
    self.headerLines = lines
    self.hasExpectHeader = expect
    self.body = body
    self.bodyLength = body?.totalLength ?? 0
    self.sink = sink
    self.timeout = deadline
    self.idleTimeout = idleTimeout
    self.asksToContinue = asksToContinue
    self.progress = progress
    self.informational = informational
    self.pathStatus = pathStatus
    self.context = context
  }

  /// A header value without surrounding whitespace. Foundation's `trimmingCharacters(in:)` is
  /// only called when the value starts or ends with a space, a tab or a non-ASCII byte: it was
  /// 5 % of a replay's CPU for values that never have any (Docs/benchmarks/sync.md).
  static func trimmed(_ value: String) -> String {
    guard let first = value.utf8.first, let last = value.utf8.last else { return value }
    func plain(_ byte: UInt8) -> Bool { byte < 0x80 && byte != 0x20 && byte != 0x09 }
    if plain(first), plain(last) { return value }
    return value.trimmingSpacesAndTabs()
  }

  /// The instant the deadline passes, fixed when the transfer starts.
  var deadline: ContinuousClock.Instant? { state.withLock { $0.deadline } }

  /// Whether the caller has been answered.
  var isFinished: Bool { state.withLock { $0.finished } }

  /// Installs the continuation and starts the deadline's count.
  /// - Returns: false when a cancellation came first (the caller was answered already).
  func start(_ continuation: CheckedContinuation<CurlAnswer, any Error>) -> Bool {
    let cancelled = state.withLock { state -> Bool in
      state.deadline = timeout.map { ContinuousClock.now + $0 }
      if state.cancelled {
        state.finished = true
        return true
      }
      state.continuation = continuation
      return false
    }
    if cancelled {
      continuation.resume(throwing: CourierError(.cancelled, context: context))
      return false
    }
    return true
  }

  /// Answers the caller as cancelled now, without waiting for libcurl.
  /// - Returns: whether the transfer was running and the transport's thread must drop it.
  func cancel() -> Bool {
    let continuation = state.withLock { state -> CheckedContinuation<CurlAnswer, any Error>? in
      state.cancelled = true
      guard !state.finished, let continuation = state.continuation else { return nil }
      state.finished = true
      state.continuation = nil
      return continuation
    }
    continuation?.resume(throwing: CourierError(.cancelled, context: context))
    return continuation != nil
  }

  /// Answers the caller, unless it was answered already.
  /// - Parameter result: the response or the error.
  func finish(_ result: Result<CurlAnswer, CourierError>) {
    let continuation = state.withLock { state -> CheckedContinuation<CurlAnswer, any Error>? in
      guard !state.finished else { return nil }
      state.finished = true
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: result.mapError { $0 as any Error })
  }
}
