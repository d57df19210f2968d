import CourierDomain
import Foundation

/// Per-call options a transport honours, travelling with the call through every decorator:
/// the deadline, where upload progress goes, and who hears of retry decisions. Nothing about a
/// call is kept in a process-wide table.
public struct TransportOptions: Sendable {
  /// The overall time one attempt may take, connection and body included. URLSession on Linux
  /// only has an idle timeout, so adapters enforce this themselves.
  public var deadline: Duration?
  /// Receives the body bytes sent so far in the current attempt, from any thread; nil for
  /// none. It starts again from zero when an attempt is retried.
  public var progress: (@Sendable (TransferProgress) -> Void)?
  /// Receives each decision the retry step makes for this call, from the caller's task; nil
  /// for none.
  public var onRetry: (@Sendable (RetryEvent) -> Void)?

  /// Creates options.
  /// - Parameters:
  ///   - deadline: the per-attempt deadline; nil for none.
  ///   - progress: receives bytes sent so far; nil for none.
  ///   - onRetry: receives each retry decision; nil for none.
  public init(
    deadline: Duration? = .seconds(30),
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    onRetry: (@Sendable (RetryEvent) -> Void)? = nil
  ) {
    self.deadline = deadline
    self.progress = progress
    self.onRetry = onRetry
  }

  /// A copy with another deadline; progress and retry observers are kept.
  /// - Parameter deadline: the new deadline.
  /// - Returns: the copy.
  public func with(deadline: Duration?) -> TransportOptions {
    var copy = self
    copy.deadline = deadline
    return copy
  }
}
