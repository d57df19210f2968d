import CourierDomain

/// Everything the terminal interface shows, as one value: the core's state (fed by the wiring
/// through `TUIUpdate`) and the interface's own (screen, selection, editors).
package struct TUIState: Sendable, Hashable {
  /// The network path, as the path monitor last said.
  package var path: PathStatus
  /// Whether the path is metered (NetworkManager's `Metered`, or a cellular link): the header
  /// says so.
  package var isMetered = false
  /// Operations waiting in the outbox.
  package var pendingCount: Int
  /// Whether the outbox is being sent right now.
  package var isSyncing: Bool
  /// Operations the server refused, with their messages.
  package var rejected: [SyncIssue]
  /// Conflicts waiting for a person, with their messages.
  package var conflicts: [SyncIssue]
  /// The articles, in display order.
  package var articles: [ArticleItem]
  /// Where the articles come from.
  package var source: ArticlesSource
  /// Why the last refresh failed, for a person; nil after a success.
  package var refreshError: String?
  /// Why the waiting changes are not going out although the path is up (the network answered,
  /// but not the server; the session expired…), for a person; nil once a send succeeds.
  package var sendBlocked: String?
  /// The current or last photo upload.
  package var upload: UploadState?
  /// The uploads queued in the outbox (`courier upload --queue`), in the order they are sent.
  package var queuedUploads: [QueuedUploadItem]
  /// The screen showing.
  package var screen: Screen
  /// The index of the selected article.
  package var selection: Int
  /// The index of the first article shown.
  package var scrollOffset: Int
  /// A short message for the status line, replaced by the next one or by a key press.
  package var statusMessage: String?

  /// Creates a state.
  /// - Parameters:
  ///   - path: the network path.
  ///   - pendingCount: operations waiting.
  ///   - isSyncing: whether the outbox is being sent.
  ///   - rejected: refused operations.
  ///   - conflicts: conflicts.
  ///   - articles: the articles.
  ///   - source: where they come from.
  ///   - refreshError: why the last refresh failed.
  ///   - sendBlocked: why waiting changes are not going out.
  ///   - upload: the upload.
  ///   - queuedUploads: the queued uploads.
  ///   - screen: the screen.
  ///   - selection: the selected index.
  ///   - scrollOffset: the first index shown.
  ///   - statusMessage: the status line.
  package init(
    path: PathStatus = .unknown, pendingCount: Int = 0, isSyncing: Bool = false,
    rejected: [SyncIssue] = [], conflicts: [SyncIssue] = [], articles: [ArticleItem] = [],
    source: ArticlesSource = .none, refreshError: String? = nil, sendBlocked: String? = nil,
    upload: UploadState? = nil, queuedUploads: [QueuedUploadItem] = [],
    screen: Screen = .list, selection: Int = 0, scrollOffset: Int = 0,
    statusMessage: String? = nil
  ) {
    self.path = path
    self.pendingCount = pendingCount
    self.isSyncing = isSyncing
    self.rejected = rejected
    self.conflicts = conflicts
    self.articles = articles
    self.source = source
    self.refreshError = refreshError
    self.sendBlocked = sendBlocked
    self.upload = upload
    self.queuedUploads = queuedUploads
    self.screen = screen
    self.selection = selection
    self.scrollOffset = scrollOffset
    self.statusMessage = statusMessage
  }

  /// The selected article, if the list is not empty.
  package var selectedArticle: ArticleItem? {
    articles.indices.contains(selection) ? articles[selection] : nil
  }
}
