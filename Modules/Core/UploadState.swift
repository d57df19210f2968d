import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The state of an upload, as published while it runs: compressing, prepared, sending (with
/// the bytes sent), retrying, then succeeded or failed.
///
/// A struct over a private phase, so that a state added later breaks no one's code: read the
/// progress with ``progress``, the server's answer with ``result``, and a line for a person
/// with ``description``.
public struct UploadState: Sendable, Equatable, CustomStringConvertible {
  /// The phases, for Courier's own exhaustive switches.
  package enum Phase: Sendable, Equatable {
    /// The image is being compressed.
    case compressing
    /// The file to send is chosen; the verdict says which and why.
    case prepared(CompressionDecision.Verdict)
    /// `sent` of `total` body bytes are sent in the current attempt.
    case uploading(sent: Int64, total: Int64)
    /// Attempt `attempt` failed for `reason`; attempt `attempt + 1` of `maxAttempts` starts
    /// after `delay`.
    case retrying(attempt: Int, maxAttempts: Int, delay: Duration, reason: CourierError)
    /// The server accepted the upload.
    case succeeded(UploadResult)
    /// The upload failed (or was cancelled).
    case failed(CourierError)
  }

  /// Where the upload is.
  package let phase: Phase

  /// A state in a phase.
  /// - Parameter phase: the phase.
  package init(_ phase: Phase) { self.phase = phase }

  /// The image is being compressed.
  package static let compressing = UploadState(.compressing)

  /// The file to send is chosen.
  /// - Parameter verdict: which and why.
  /// - Returns: the state.
  package static func prepared(_ verdict: CompressionDecision.Verdict) -> UploadState {
    UploadState(.prepared(verdict))
  }

  /// Bytes are being sent.
  /// - Parameters:
  ///   - sent: bytes sent in the current attempt.
  ///   - total: the body's length.
  /// - Returns: the state.
  package static func uploading(sent: Int64, total: Int64) -> UploadState {
    UploadState(.uploading(sent: sent, total: total))
  }

  /// An attempt failed and another follows.
  /// - Parameters:
  ///   - attempt: the attempt that failed.
  ///   - maxAttempts: the attempts allowed.
  ///   - delay: the wait before the next.
  ///   - reason: why it failed.
  /// - Returns: the state.
  package static func retrying(
    attempt: Int, maxAttempts: Int, delay: Duration, reason: CourierError
  ) -> UploadState {
    UploadState(.retrying(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: reason))
  }

  /// The server accepted the upload.
  /// - Parameter result: the server's reply and what was sent.
  /// - Returns: the state.
  package static func succeeded(_ result: UploadResult) -> UploadState {
    UploadState(.succeeded(result))
  }

  /// The upload failed.
  /// - Parameter error: why.
  /// - Returns: the state.
  package static func failed(_ error: CourierError) -> UploadState { UploadState(.failed(error)) }

  /// The bytes sent of the body while sending (they start again from zero when an attempt is
  /// retried); nil in any other state.
  public var progress: TransferProgress? {
    guard case .uploading(let sent, let total) = phase else { return nil }
    return TransferProgress(sent: sent, total: total)
  }

  /// The server's reply and what was sent, once the upload succeeded; nil before.
  public var result: UploadResult? {
    guard case .succeeded(let result) = phase else { return nil }
    return result
  }

  /// Whether this state ends the upload.
  package var isFinal: Bool {
    switch phase {
    case .succeeded, .failed: return true
    case .compressing, .prepared, .uploading, .retrying: return false
    }
  }

  /// One line for a person: "compressing", "uploading 1200 of 5000 bytes", "server busy (503),
  /// retrying in 1.0 s, attempt 2 of 4", "uploaded (201)".
  public var description: String {
    switch phase {
    case .compressing: return "compressing"
    case .prepared(let verdict): return verdict.message
    case .uploading(let sent, let total): return "uploading \(sent) of \(total) bytes"
    case .retrying(let attempt, let maxAttempts, let delay, let reason):
      return RetryEvent.retrying(
        attempt: attempt, maxAttempts: maxAttempts, delay: delay, error: reason
      ).humanDescription
    case .succeeded(let result): return "uploaded (\(result.response.status.code))"
    case .failed(let error): return "failed: \(error.userMessage)"
    }
  }
}

extension UploadState {
  /// The states of an upload `perform` runs in a task of the stream's own: every state but the
  /// final one as `perform` reports it, then `succeeded`, or the stream throws the
  /// `CourierError` that ended the upload (so a failure cannot be taken for the end of
  /// progress); ending the iteration early (or cancelling the consuming task) cancels it.
  /// The one definition of `Uploader.states(for:)` and `TusUploader.states(for:)`.
  /// - Parameter perform: runs the upload, reporting each state to the closure it is given.
  /// - Returns: the states, in order; none is dropped.
  static func stream(
    _ perform:
      @escaping @Sendable (_ onState: @escaping @Sendable (UploadState) -> Void) async throws ->
      UploadResult
  ) -> AsyncThrowingStream<UploadState, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: UploadState.self)
    let task = Task {
      do {
        let result = try await perform { state in
          if !state.isFinal { continuation.yield(state) }
        }
        continuation.yield(.succeeded(result))
        continuation.finish()
      } catch {
        continuation.finish(throwing: CourierError.wrapping(error))
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }
}
