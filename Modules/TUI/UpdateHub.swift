import Synchronization

/// The one stream of `TUIUpdate`s the event loop reads, fed by the wiring's sources. Updates are
/// deltas the loop applies in order, so nothing is dropped; the producers coalesce what would
/// be too many (upload progress, see `CourierCore.ProgressThrottle`).
package final class UpdateHub: Sendable {
  private let continuation: AsyncStream<TUIUpdate>.Continuation
  /// The stream (one consumer: the event loop).
  package let stream: AsyncStream<TUIUpdate>

  /// Creates a hub.
  package init() {
    (stream, continuation) = AsyncStream.makeStream(of: TUIUpdate.self)
  }

  /// Sends an update.
  /// - Parameter update: the update.
  package func send(_ update: TUIUpdate) { continuation.yield(update) }

  /// Ends the stream.
  package func finish() { continuation.finish() }
}
