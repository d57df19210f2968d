import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The state of an upload, as published while it runs.
public enum UploadState: Sendable, Equatable {
  /// The image is being compressed.
  case compressing
  /// The file to send is chosen; the verdict says which and why ("sent the original because…").
  case prepared(CompressionDecision.Verdict)
  /// `sent` of `total` body bytes are sent in the current attempt.
  case uploading(sent: Int64, total: Int64)
  /// Attempt `attempt` failed for `reason`; attempt `attempt + 1` of `maxAttempts` starts after
  /// `delay`.
  case retrying(attempt: Int, maxAttempts: Int, delay: Duration, reason: CourierError)
  /// The server accepted the upload.
  case succeeded(UploadResult)
  /// The upload failed (or was cancelled).
  case failed(CourierError)

  /// Whether this state ends the upload.
  public var isFinal: Bool {
    switch self {
    case .succeeded, .failed: return true
    default: return false
    }
  }
}
