import CourierDomain
import CourierPorts
import HTTPTypes
import Synchronization

/// A transport decorator, next to the adapter, that counts the request body bytes each
/// exchange sent (`courier_bytes_sent_total`, decision 2203): the whole body of an exchange
/// that got an answer, and of one that failed the bytes its progress reported (an upload's; a
/// small body sent without a progress observer counts 0 then). The composition root puts it in
/// the pipeline only when the metrics record anything.
package struct MetricsTransport: Transport {
  private let base: any Transport
  private let metrics: CourierMetrics

  /// The wrapped transport's (see `Transport.taskExecutor`).
  package var taskExecutor: (any TaskExecutor)? { base.taskExecutor }

  /// Wraps a transport.
  /// - Parameters:
  ///   - base: the transport.
  ///   - metrics: where the bytes are counted.
  package init(_ base: any Transport, metrics: CourierMetrics) {
    self.base = base
    self.metrics = metrics
  }

  /// Sends and counts.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, if any.
  ///   - options: per-call options.
  /// - Returns: the response and its body.
  /// - Throws: what the wrapped transport throws.
  package func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    guard let body, metrics.isEnabled else {
      return try await base.send(request, body: body, options: options)
    }
    var options = options
    let reported = Reported()
    if let observer = options.progress {
      options.progress = { progress in
        reported.note(progress.sent)
        observer(progress)
      }
    }
    do {
      let answer = try await base.send(request, body: body, options: options)
      metrics.sent(bytes: body.length ?? reported.bytes)
      return answer
    } catch {
      metrics.sent(bytes: reported.bytes)
      throw error
    }
  }

  /// The most bytes an exchange's progress reported.
  private final class Reported: Sendable {
    private let most = Mutex<Int64>(0)
    var bytes: Int64 { most.withLock { $0 } }
    func note(_ sent: Int64) { most.withLock { $0 = max($0, sent) } }
  }
}
