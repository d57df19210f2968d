import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport decorator that runs user middlewares around the transport it wraps: the first
/// in the list is the outermost, so it sees the request first and the response last.
package struct MiddlewareTransport: Transport {
  private let base: any Transport

  /// The wrapped transport's (see `Transport.taskExecutor`).
  package var taskExecutor: (any TaskExecutor)? { base.taskExecutor }
  private let middlewares: [any TransportMiddleware]

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the rest of the pipeline.
  ///   - middlewares: the middlewares, outermost first.
  package init(_ base: any Transport, middlewares: [any TransportMiddleware]) {
    self.base = base
    self.middlewares = middlewares
  }

  /// Sends through each middleware in turn, then through the wrapped transport.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, if any.
  ///   - options: per-call options.
  /// - Returns: the response and body the outermost middleware returns.
  /// - Throws: what a middleware or the wrapped transport throws.
  package func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await step(0, request, body, options)
  }

  private func step(
    _ index: Int, _ request: HTTPRequest, _ body: RequestBody?, _ options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    guard index < middlewares.count else {
      return try await base.send(request, body: body, options: options)
    }
    return try await middlewares[index].intercept(request, body: body, options: options) {
      try await step(index + 1, $0, $1, $2)
    }
  }
}
