import Synchronization

/// The one stream of `TUIUpdate`s the event loop reads, fed by the wiring's sources. Updates are
/// deltas the loop applies in order, so nothing is dropped; the producers coalesce what would
/// be too many (upload progress, see `ProgressThrottle`).
public final class UpdateHub: Sendable {
  private let continuation: AsyncStream<TUIUpdate>.Continuation
  /// The stream (one consumer: the event loop).
  public let stream: AsyncStream<TUIUpdate>

  /// Creates a hub.
  public init() {
    (stream, continuation) = AsyncStream.makeStream(of: TUIUpdate.self)
  }

  /// Sends an update.
  /// - Parameter update: the update.
  public func send(_ update: TUIUpdate) { continuation.yield(update) }

  /// Ends the stream.
  public func finish() { continuation.finish() }
}

/// Lets at most one progress update through per interval (the first, and then the newest when
/// the interval has passed); phase changes always pass, so the end of an upload is never lost.
/// Pure apart from the times it is given.
public struct ProgressThrottle: Sendable {
  /// The shortest time between two progress updates.
  public let interval: Duration
  private var last: ContinuousClock.Instant?
  private var lastPhase: UploadPhase?

  /// Creates a throttle.
  /// - Parameter interval: the shortest time between two progress updates (100 ms: 10 a second).
  public init(interval: Duration = .milliseconds(100)) { self.interval = interval }

  /// Whether to show this state now.
  /// - Parameters:
  ///   - state: the upload's state.
  ///   - now: the current time.
  /// - Returns: true to send it.
  public mutating func admit(_ state: UploadState, at now: ContinuousClock.Instant) -> Bool {
    let phaseChanged = state.phase != lastPhase
    lastPhase = state.phase
    if phaseChanged || last.map({ now - $0 >= interval }) ?? true {
      last = now
      return true
    }
    return false
  }
}
