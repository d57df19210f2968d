import CourierDomain
import Foundation

/// Per-call options a transport honours.
public struct TransportOptions: Sendable, Equatable {
  /// The overall time one attempt may take, connection and body included. URLSession on Linux
  /// only has an idle timeout, so adapters enforce this themselves.
  public var deadline: Duration?

  /// Creates options.
  /// - Parameter deadline: the per-attempt deadline; nil for none.
  public init(deadline: Duration? = .seconds(30)) { self.deadline = deadline }
}

/// Sends one HTTP request and returns the response, whatever its status. One job, so a
/// decorator (auth, retry, logging) or a fake can stand in for it.
///
/// An adapter throws a `CourierError` only when no response was received (offline, timeout,
/// reset, cancelled...), never for a 4xx or 5xx: classifying a status is the pipeline's job.
public protocol Transport: Sendable {
  /// Sends a request with an in-memory body (or none).
  /// - Parameters:
  ///   - request: the request.
  ///   - options: deadline and other per-call options.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received.
  func send(_ request: HTTPRequest, options: TransportOptions) async throws -> HTTPResponse

  /// Sends a request whose body is read from a file, with progress. Memory stays flat
  /// whatever the file's size.
  /// - Parameters:
  ///   - request: the request; its `body` is ignored.
  ///   - file: the file holding the whole body.
  ///   - options: deadline and other per-call options.
  ///   - progress: called with bytes sent so far, from any thread.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received.
  func upload(
    _ request: HTTPRequest, bodyFile file: URL, options: TransportOptions,
    progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> HTTPResponse
}

extension Transport {
  /// Sends a request with default options.
  /// - Parameter request: the request.
  /// - Returns: the response, of any status.
  /// - Throws: `CourierError` when no response was received.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await send(request, options: TransportOptions())
  }
}
