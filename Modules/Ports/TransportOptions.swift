import CourierDomain
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Per-call options a transport honours, travelling with the call through every decorator:
/// the deadline, where upload progress goes, who hears of retry decisions, and the logger the
/// call's steps log to. Nothing about a call is kept in a process-wide table.
public struct TransportOptions: Sendable {
  /// The overall time one attempt may take, connection and body included. URLSession on Linux
  /// only has an idle timeout, so adapters enforce this themselves.
  package var deadline: Duration?
  /// The longest one attempt may go without a byte sent or received, connection and the wait
  /// for the answer included; nil for no such bound. A large body's time depends on the link's
  /// rate, so an upload is bounded by this instead of ``deadline`` (``boundedByProgress()``,
  /// decision 1303): a slow link that moves finishes, a dead one fails as `timedOut`.
  package var idleTimeout: Duration?
  /// Receives the body bytes sent so far in the current attempt, from any thread; nil for
  /// none. It starts again from zero when an attempt is retried.
  package var progress: (@Sendable (TransferProgress) -> Void)?
  /// Receives each decision the retry step makes for this call, from the caller's task; nil
  /// for none.
  package var onRetry: (@Sendable (RetryEvent) -> Void)?
  /// Receives each informational (1xx) response but `100 Continue` as it arrives, before the
  /// final one, from the transport's thread (so it must be quick); nil for none. Only
  /// transports that see them call it: the curl adapter does, URLSession hides them, so a
  /// caller must work without ever hearing one (decision 2702).
  package var informational: (@Sendable (HTTPResponse) -> Void)?
  /// Where the call's steps log (each exchange, each retry decision), with the metadata of the
  /// call: the steps add `courier.request.id` and `courier.attempt` to the copy they pass on
  /// (the article "Metrics and logging" lists the keys and levels). By default a logger that
  /// discards everything.
  public var logger: Logger
  /// Where a successful reply's body is written as it arrives, instead of memory; nil (the
  /// default) to hold it in memory. Every step passes it on untouched; the retry step then
  /// repeats only an attempt that never reached the server, so a partial file is never
  /// written over by a second attempt (decision 2500).
  public var responseSink: ResponseSink?

  /// Creates options.
  /// - Parameters:
  ///   - deadline: the per-attempt deadline; nil for none.
  ///   - progress: receives bytes sent so far; nil for none.
  ///   - logger: where the call's steps log; by default nowhere.
  public init(
    deadline: Duration? = .seconds(30),
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    logger: Logger = .courierDiscarding
  ) {
    self.init(deadline: deadline, progress: progress, onRetry: nil, logger: logger)
  }

  /// Creates options with an observer of the retry step's decisions (`--verbose`, the replay
  /// loop's attempt counts).
  /// - Parameters:
  ///   - deadline: the per-attempt deadline; nil for none.
  ///   - progress: receives bytes sent so far; nil for none.
  ///   - onRetry: receives each retry decision; nil for none.
  ///   - logger: where the call's steps log; by default nowhere.
  package init(
    deadline: Duration? = .seconds(30),
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)?,
    logger: Logger = .courierDiscarding
  ) {
    self.deadline = deadline
    self.progress = progress
    self.onRetry = onRetry
    self.logger = logger
  }

  /// A copy with another deadline; progress and retry observers and the logger are kept.
  /// - Parameter deadline: the new deadline.
  /// - Returns: the copy.
  package func with(deadline: Duration?) -> TransportOptions {
    var copy = self
    copy.deadline = deadline
    return copy
  }

  /// A copy for a request whose body may take as long as the link needs (an upload's body,
  /// decision 1303): the overall deadline becomes an idle timeout of the same length (or the
  /// shorter of the two, when both are set), so the attempt ends when nothing moved for that
  /// long rather than when the whole body did not fit in it.
  /// - Returns: the copy; unchanged when there is no deadline.
  package func boundedByProgress() -> TransportOptions {
    guard let deadline else { return self }
    var copy = self
    copy.deadline = nil
    copy.idleTimeout = idleTimeout.map { min($0, deadline) } ?? deadline
    return copy
  }
}
