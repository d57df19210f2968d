import CourierDomain
import CourierPorts
import Foundation

/// A transport decorator that logs each exchange in one line: method, path, status, time.
/// Headers are logged redacted (never an `Authorization` value); bodies never.
public struct LoggingTransport: Transport {
  private let base: any Transport
  private let log: @Sendable (String) -> Void

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport.
  ///   - log: receives each line.
  public init(_ base: any Transport, log: @escaping @Sendable (String) -> Void) {
    self.base = base
    self.log = log
  }

  /// The line logged for a request about to be sent.
  /// - Parameter request: the request.
  /// - Returns: the line, headers redacted.
  public static func line(for request: HTTPRequest) -> String {
    let headers = request.headers.redacted.map { "\($0.name): \($0.value)" }.joined(separator: "; ")
    return "→ \(request.method) \(request.url.absoluteString)"
      + (headers.isEmpty ? "" : " [\(headers)]")
  }

  /// Sends and logs.
  /// - Parameters:
  ///   - request: the request.
  ///   - options: per-call options.
  /// - Returns: the response.
  /// - Throws: what the wrapped transport throws.
  public func send(_ request: HTTPRequest, options: TransportOptions) async throws -> HTTPResponse {
    try await logged(request) { try await base.send(request, options: options) }
  }

  /// Uploads and logs.
  /// - Parameters:
  ///   - request: the request.
  ///   - file: the body file.
  ///   - options: per-call options.
  ///   - progress: bytes sent.
  /// - Returns: the response.
  /// - Throws: what the wrapped transport throws.
  public func upload(
    _ request: HTTPRequest, bodyFile file: URL, options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    try await logged(request) {
      try await base.upload(request, bodyFile: file, options: options, progress: progress)
    }
  }

  private func logged(
    _ request: HTTPRequest, _ body: () async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    log(Self.line(for: request))
    let start = ContinuousClock.now
    do {
      let response = try await body()
      log("← \(response.status) \(request.summary) in \(Self.ms(start.duration(to: .now)))")
      return response
    } catch {
      log("✗ \(request.summary) in \(Self.ms(start.duration(to: .now))): \(error)")
      throw error
    }
  }

  private static func ms(_ duration: Duration) -> String {
    String(format: "%.0f ms", duration.seconds * 1000)
  }
}

extension LoggingTransport: SegmentForwarding {
  /// Whether the wrapped transport streams segments.
  public var forwardsSegments: Bool { SegmentStreaming.streamer(for: base) != nil }

  /// Uploads a segmented body and logs.
  /// - Parameters:
  ///   - request: the request.
  ///   - segments: the body's pieces.
  ///   - options: per-call options.
  ///   - progress: bytes sent.
  /// - Returns: the response.
  /// - Throws: what the wrapped transport throws; `invalidInput` when it cannot stream
  ///   segments.
  public func upload(
    _ request: HTTPRequest, segments: [BodySegment], options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse {
    let streamer = try SegmentStreaming.required(beneath: base, for: request)
    return try await logged(request) {
      try await streamer.upload(request, segments: segments, options: options, progress: progress)
    }
  }
}
