#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where one queued upload stands, for `courier outbox` and the terminal UI: its entry, what it
/// sends, the bytes the server confirmed (a tus upload's saved offset; 0 for a multipart one
/// until it is done) and, while this process sends it, the bytes sent so far.
public struct QueuedUploadProgress: Sendable, Equatable {
  /// The outbox entry (its state: pending, or refused and kept).
  package var entry: OutboxEntry
  /// What it sends; nil when the entry's payload cannot be read.
  package var upload: QueuedUpload?
  /// The bytes the server confirmed it holds.
  package var confirmed: Int64
  /// The bytes sent so far by a transfer running in this process, from the confirmed offset;
  /// nil when none runs.
  package var sending: Int64?
  /// Where the transfer running in this process started: the offset the server held when it
  /// resumed (0 for a new upload, or a multipart one); nil when none runs or before its first
  /// report. A progress bar starts there, and `courier sync --json` says `resumed_at`.
  package var resumedAt: Int64?

  /// Creates a progress.
  /// - Parameters:
  ///   - entry: the entry.
  ///   - upload: what it sends.
  ///   - confirmed: the confirmed bytes.
  ///   - sending: the bytes sent by a running transfer.
  ///   - resumedAt: where that transfer started.
  package init(
    entry: OutboxEntry, upload: QueuedUpload?, confirmed: Int64, sending: Int64? = nil,
    resumedAt: Int64? = nil
  ) {
    self.entry = entry
    self.upload = upload
    self.confirmed = confirmed
    self.sending = sending
    self.resumedAt = resumedAt
  }

  /// The upload's id (its entry's record id).
  public var id: String { entry.key.id }
  /// The name it is sent under, or its id when unreadable.
  public var name: String { upload?.filename ?? entry.key.id }
  /// The bytes to send in all.
  public var total: Int64 { upload?.length ?? 0 }
  /// The bytes to show: those being sent, else those confirmed; never below the confirmed
  /// ones (a bar does not go back to 0 when a transfer resumes).
  public var shown: Int64 { max(confirmed, sending ?? 0) }
  /// `shown` over `total`, 0...1 (1 for an empty file).
  package var fraction: Double {
    guard total > 0 else { return 1 }
    return min(1, max(0, Double(shown) / Double(total)))
  }
  /// Whole percent, rounded down (100 only when every byte is shown).
  package var percent: Int { Int((fraction * 100).rounded(.down)) }
}
