import CourierDomain

/// A change in the core's state, as the wiring reports it. The interface's own state (screen,
/// selection, editors) is never touched by the core.
package enum TUIUpdate: Sendable, Hashable {
  /// The network path changed.
  case path(PathStatus)
  /// Whether the path is metered (`NetworkPath.isExpensive`) changed.
  case metered(Bool)
  /// The outbox changed.
  case outbox(pending: Int, isSyncing: Bool)
  /// The refused operations and the conflicts, in full.
  case issues(rejected: [SyncIssue], conflicts: [SyncIssue])
  /// The articles, in full, and where they come from.
  case articles([ArticleItem], source: ArticlesSource)
  /// A refresh failed (with the message for a person), or nil once one succeeded.
  case refreshFailed(message: String?)
  /// Sending the outbox stopped (with the message for a person), or nil once it went on.
  case sendBlocked(message: String?)
  /// The photo upload changed (nil: none to show).
  case upload(UploadState?)
  /// The uploads queued in the outbox and where each stands.
  case queuedUploads([QueuedUploadItem])
  /// A message for the status line.
  case status(String?)
}
