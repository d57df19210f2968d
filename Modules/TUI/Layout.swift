/// Where each part of the screen goes for a state and a size. Shared by the renderer (to draw)
/// and the reducer (to page and scroll by what is visible).
struct Layout {
  /// Issue lines shown at most under the header; past that, a "… and N more" line.
  static let maximumIssueRows = 3

  let size: TerminalSize
  /// The issue lines to show under the info line.
  let issueRows: Int
  /// Whether an upload line is shown above the status line.
  let showsUpload: Bool
  /// Queued upload lines shown at most, on the list screen; past that, "… and N more".
  static let maximumQueuedRows = 2
  /// The queued upload lines shown above the upload line (only on the list screen, so every
  /// other screen keeps its room).
  let queuedRows: Int

  init(state: TUIState, size: TerminalSize) {
    self.size = size
    let issues = state.rejected.count + state.conflicts.count
    self.issueRows = min(issues, Self.maximumIssueRows)
    self.showsUpload = state.upload != nil
    self.queuedRows =
      state.screen == .list ? min(state.queuedUploads.count, Self.maximumQueuedRows) : 0
  }

  /// The first row of the body (list, detail, form…): after the header, the info line, the
  /// issues and a rule.
  var bodyTop: Int { 2 + issueRows + 1 }

  /// The rows of the body.
  var listHeight: Int {
    max(1, size.rows - bodyTop - (showsUpload ? 1 : 0) - queuedRows - 2)
  }

  /// The row of the first queued upload line.
  var queuedTop: Int { size.rows - 2 - (showsUpload ? 1 : 0) - queuedRows }

  /// The row of the upload line.
  var uploadRow: Int { size.rows - 3 }

  /// The row of the status line.
  var statusRow: Int { size.rows - 2 }

  /// The row of the key hints.
  var footerRow: Int { size.rows - 1 }

  /// Whether the terminal is large enough to lay anything out.
  var fits: Bool {
    size.rows >= TerminalSize.minimum.rows && size.columns >= TerminalSize.minimum.columns
  }

  /// The lines of an article's detail view, before scrolling.
  func detailLines(for article: ArticleItem, in state: TUIState) -> [String] {
    let width = size.columns - 2
    let issues = (state.rejected + state.conflicts).filter { $0.articleID == article.id }
    var lines = DisplayWidth.wrap(article.title, to: width)
    if article.isPending { lines.append("* Waiting to be sent to the server.") }
    if article.isConflicted { lines.append("! Changed elsewhere too: in conflict.") }
    if let photo = article.photo { lines.append("Photo: " + photo.dropFirst("photo ".count)) }
    for issue in issues {
      lines += DisplayWidth.wrap("! \(issue.title): \(issue.message)", to: width)
    }
    lines.append(String(repeating: "─", count: min(width, 40)))
    lines += article.body.isEmpty ? ["(no text)"] : DisplayWidth.wrap(article.body, to: width)
    return lines
  }
}
