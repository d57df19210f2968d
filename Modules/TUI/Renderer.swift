import CourierDomain
import CourierSystem

/// A text attribute. Mapped to SGR sequences only when colour is on.
enum Style: Sendable {
  case plain, bold, dim, selected, header, offline, syncing, error, warning, success

  var sgr: String {
    switch self {
    case .plain: return ""
    case .bold: return "\u{1B}[1m"
    case .dim: return "\u{1B}[2m"
    case .selected: return "\u{1B}[7m"
    case .header: return "\u{1B}[1;7m"
    case .offline: return "\u{1B}[1;30;43m"
    case .syncing: return "\u{1B}[1;30;46m"
    case .error: return "\u{1B}[31m"
    case .warning: return "\u{1B}[33m"
    case .success: return "\u{1B}[32m"
    }
  }
}

/// One row built from styled pieces, cut and padded to the terminal's width by display columns.
struct StyledLine {
  var segments: [(text: String, style: Style)] = []
  /// The style of the padding after the last piece (a header is coloured across the row).
  var fill: Style = .plain

  init(_ text: String = "", _ style: Style = .plain, fill: Style = .plain) {
    if !text.isEmpty { segments.append((text, style)) }
    self.fill = fill
  }

  mutating func append(_ text: String, _ style: Style = .plain) {
    segments.append((text, style))
  }

  func render(width: Int, colour: Bool) -> String {
    var out = ""
    var used = 0
    for (text, style) in segments {
      let remaining = width - used
      if remaining <= 0 { break }
      let cut = DisplayWidth.truncate(LogText.escaped(text), to: remaining)
      used += DisplayWidth.of(cut)
      out += paint(cut, style, colour)
    }
    if used < width { out += paint(String(repeating: " ", count: width - used), fill, colour) }
    return out
  }

  private func paint(_ text: String, _ style: Style, _ colour: Bool) -> String {
    guard colour, style.sgr != "", !text.isEmpty else { return text }
    return style.sgr + text + "\u{1B}[0m"
  }
}

/// Draws the interface: a pure function from a state and a terminal size to the screen's rows.
package enum Renderer {
  /// The header's badge, following the seed's rule: "Offline" when there is no path, "Syncing N
  /// pending" while the outbox is not empty, nothing when online with nothing pending; on a
  /// metered path "metered" comes first (decision 2603).
  /// - Parameter state: the state.
  /// - Returns: the badge text, or nil for none.
  package static func badge(for state: TUIState) -> String? {
    let base = pathBadge(for: state)
    guard state.isMetered, state.path != .unsatisfied, state.path != .requiresConnection else {
      return base
    }
    return base.map { "metered · " + $0 } ?? "metered"
  }

  private static func pathBadge(for state: TUIState) -> String? {
    switch state.path.code {
    case .unsatisfied, .requiresConnection:
      return state.pendingCount > 0 ? "Offline · \(state.pendingCount) pending" : "Offline"
    case .captivePortal:
      let login = "Wi-Fi login needed"
      return state.pendingCount > 0 ? "\(login) · \(state.pendingCount) pending" : login
    case .satisfied, .unknown:
      // A path that is up is a hint, not a server: when sending stopped (a Wi-Fi login page
      // answering, an expired session), the header says the changes are not going out.
      if state.pendingCount > 0, state.sendBlocked != nil, !state.isSyncing {
        return "Not sent · \(state.pendingCount) pending"
      }
      if state.pendingCount > 0 { return "Syncing \(state.pendingCount) pending" }
      return state.isSyncing ? "Syncing" : nil
    }
  }

  /// Draws a state.
  /// - Parameters:
  ///   - state: the state.
  ///   - size: the terminal's size.
  ///   - colour: whether SGR colour and attributes may be used.
  /// - Returns: exactly `size.rows` rows, each exactly `size.columns` columns wide.
  package static func render(_ state: TUIState, size: TerminalSize, colour: Bool) -> RenderedScreen
  {
    let rows = max(0, size.rows)
    let width = max(0, size.columns)
    let layout = Layout(state: state, size: size)
    guard layout.fits else {
      var lines = Array(repeating: StyledLine(), count: rows)
      let message = [
        "courier-tui needs a terminal of at least \(TerminalSize.minimum).",
        "This one is \(size). Make it larger, or press q to quit.",
      ]
      for (offset, text) in message.enumerated() where offset < rows {
        lines[min(rows - 1, rows / 2 - 1 + offset)] = StyledLine(text, .warning)
      }
      return RenderedScreen(lines: lines.map { $0.render(width: width, colour: colour) })
    }

    var lines = Array(repeating: StyledLine(), count: rows)
    lines[0] = header(state, width: width)
    lines[1] = info(state)
    for (offset, line) in issueLines(state).enumerated() { lines[2 + offset] = line }
    lines[layout.bodyTop - 1] = rule(state, layout: layout)

    var cursor: RenderedScreen.Cursor?
    let body: [StyledLine]
    switch state.screen {
    case .list, .confirmDelete:
      body = listLines(state, layout: layout)
    case .detail(let id, let scroll):
      body = detailLines(state, id: id, scroll: scroll, layout: layout)
    case .help:
      body = helpLines()
    case .editForm(let form):
      let drawn = formLines(form, width: width)
      body = drawn.lines
      cursor = RenderedScreen.Cursor(
        row: layout.bodyTop + drawn.cursor.row, column: drawn.cursor.column)
    case .prompt(let prompt):
      let drawn = promptLines(prompt, width: width)
      body = drawn.lines
      cursor = RenderedScreen.Cursor(
        row: layout.bodyTop + drawn.cursor.row, column: drawn.cursor.column)
    }
    for (offset, line) in body.prefix(layout.listHeight).enumerated() {
      lines[layout.bodyTop + offset] = line
    }
    for (offset, line) in queuedLines(state, rows: layout.queuedRows).enumerated() {
      lines[layout.queuedTop + offset] = line
    }
    if let upload = state.upload, layout.showsUpload {
      lines[layout.uploadRow] = uploadLine(upload, width: width)
    }
    lines[layout.statusRow] = statusLine(state)
    lines[layout.footerRow] = StyledLine(footer(for: state.screen), .dim)
    return RenderedScreen(
      lines: lines.map { $0.render(width: width, colour: colour) }, cursor: cursor)
  }

  // MARK: - Parts

  private static func header(_ state: TUIState, width: Int) -> StyledLine {
    var line = StyledLine(" Courier · Articles", .header, fill: .header)
    guard let badge = badge(for: state) else { return line }
    let isOffline = state.path == .unsatisfied || state.path == .requiresConnection
    let text = " \(badge) "
    let gap = width - DisplayWidth.of(" Courier · Articles") - DisplayWidth.of(text) - 1
    line.append(String(repeating: " ", count: max(1, gap)), .header)
    let isBlocked = state.pendingCount > 0 && state.sendBlocked != nil && !state.isSyncing
    line.append(text, isOffline || isBlocked ? .offline : .syncing)
    return line
  }

  private static func info(_ state: TUIState) -> StyledLine {
    var line = StyledLine()
    switch state.source {
    case .none: line.append(" Loading articles…", .dim)
    case .cache(let age): line.append(" Saved copy from \(describe(age: age))", .dim)
    case .network: line.append(" Up to date", .dim)
    }
    if let error = state.refreshError {
      line.append(" · ", .dim)
      line.append("Couldn't refresh: \(error)", .warning)
    } else if state.pendingCount > 0, let blocked = state.sendBlocked {
      line.append(" · ", .dim)
      line.append("Not sent: \(blocked)", .warning)
    }
    return line
  }

  /// "just now", "5 minutes ago", "3 hours ago", "2 days ago".
  static func describe(age: Duration) -> String {
    let seconds = max(0, age.components.seconds)
    switch seconds {
    case ..<60: return "just now"
    case ..<120: return "1 minute ago"
    case ..<3600: return "\(seconds / 60) minutes ago"
    case ..<7200: return "1 hour ago"
    case ..<86_400: return "\(seconds / 3600) hours ago"
    case ..<172_800: return "1 day ago"
    default: return "\(seconds / 86_400) days ago"
    }
  }

  private static func issueLines(_ state: TUIState) -> [StyledLine] {
    let all =
      state.rejected.map { ("Refused", $0, Style.error) }
      + state.conflicts.map { ("Conflict", $0, Style.warning) }
    let limit = Layout.maximumIssueRows
    let shown = all.count > limit ? Array(all.prefix(limit - 1)) : all
    var lines = shown.map { kind, issue, style in
      StyledLine(" ! \(kind): \(issue.title): \(issue.message)", style)
    }
    if all.count > limit {
      lines.append(
        StyledLine(" … and \(all.count - shown.count) more: open an article for its message", .dim))
    }
    return lines
  }

  /// A rule under the header; for a list longer than the screen, it says where the selection is.
  private static func rule(_ state: TUIState, layout: Layout) -> StyledLine {
    let width = layout.size.columns
    guard state.articles.count > layout.listHeight, state.screen == .list else {
      return StyledLine(String(repeating: "─", count: width), .dim)
    }
    let position = " \(state.selection + 1)/\(state.articles.count) "
    return StyledLine(
      String(repeating: "─", count: max(0, width - DisplayWidth.of(position) - 2)) + position
        + "──", .dim)
  }

  private static func listLines(_ state: TUIState, layout: Layout) -> [StyledLine] {
    guard !state.articles.isEmpty else {
      let text =
        state.source == .none ? " Loading…" : " No articles yet. Press a to add one, r to refresh."
      return [StyledLine(), StyledLine(text, .dim)]
    }
    let width = layout.size.columns
    // Wide terminals get a column with the start of the body.
    let titleWidth = width >= 100 ? max(30, width * 45 / 100) : width - 5
    let end = min(state.articles.count, state.scrollOffset + layout.listHeight)
    var lines: [StyledLine] = []
    for index in state.scrollOffset..<end {
      let article = state.articles[index]
      let isSelected = index == state.selection
      let style: Style = isSelected ? .selected : .plain
      var line = StyledLine(isSelected ? ">" : " ", style, fill: style)
      let flag = article.isConflicted ? "!" : article.isPending ? "*" : " "
      line.append(" \(flag) ", isSelected ? .selected : article.isConflicted ? .warning : .dim)
      // A photo on its way says so after the title: "[photo uploading 40%]".
      let photo = article.photo.map { " [\($0)]" } ?? ""
      let photoWidth = DisplayWidth.of(photo)
      let title = DisplayWidth.fit(
        LogText.escaped(article.title), to: max(1, titleWidth - photoWidth))
      line.append(title, isSelected ? .selected : .bold)
      if !photo.isEmpty { line.append(photo, isSelected ? .selected : .dim) }
      if width >= 100 {
        line.append("  " + LogText.escaped(article.body), isSelected ? .selected : .dim)
      }
      lines.append(line)
    }
    return lines
  }

  private static func detailLines(_ state: TUIState, id: String, scroll: Int, layout: Layout)
    -> [StyledLine]
  {
    guard let article = state.articles.first(where: { $0.id == id }) else { return [] }
    let all = layout.detailLines(for: article, in: state)
    let titleCount = DisplayWidth.wrap(article.title, to: layout.size.columns - 2).count
    return all.enumerated().dropFirst(scroll).map { index, text in
      let style: Style =
        index < titleCount
        ? .bold : text.hasPrefix("!") ? .warning : text.hasPrefix("*") ? .dim : .plain
      return StyledLine(" " + text, style)
    }
  }

  private static func helpLines() -> [StyledLine] {
    let keys: [(String, String)] = [
      ("↑ ↓ / j k", "move in the list (PgUp PgDn Home End too)"),
      ("Enter", "open the article"),
      ("r", "refresh from the server (the saved copy stays if it fails)"),
      ("a", "add an article"),
      ("e", "edit the selected article"),
      ("d", "delete the selected article (asks first)"),
      ("s", "send pending changes now"),
      ("u", "upload a photo (asks for its path)"),
      ("Esc", "go back, cancel, dismiss a finished upload"),
      ("?", "this help"),
      ("q, Ctrl-C", "quit"),
      ("Editing", "← → Home End Backspace Delete, Ctrl-A/E/K/U/W, Tab: other field"),
      ("Header", "Offline: changes are kept · Syncing N pending: N still to send"),
      ("List", "* waiting to be sent   ! in conflict"),
    ]
    // 15 lines: fits the smallest body (80×24 with three issue lines and an upload).
    var lines = [StyledLine(" Keys (any key closes this help)", .bold)]
    for (key, text) in keys {
      var line = StyledLine("   " + DisplayWidth.fit(key, to: 12), .bold)
      line.append(text)
      lines.append(line)
    }
    return lines
  }

  private static func formLines(_ form: EditForm, width: Int)
    -> (lines: [StyledLine], cursor: RenderedScreen.Cursor)
  {
    let label = 10
    let fieldWidth = width - label - 2
    // The field without the cursor shows its beginning.
    let titleWindow =
      (form.focus == .title ? form.title : LineEditor(text: form.title.text, cursor: 0))
      .window(width: fieldWidth)
    let bodyWindow = (form.focus == .body ? form.body : LineEditor(text: form.body.text, cursor: 0))
      .window(width: fieldWidth)
    var lines = [StyledLine(form.articleID == nil ? " New article" : " Edit article", .bold)]
    lines.append(StyledLine())
    var title = StyledLine(
      DisplayWidth.fit(form.focus == .title ? " > Title" : "   Title", to: label))
    title.append(titleWindow.text, form.focus == .title ? .bold : .plain)
    var body = StyledLine(DisplayWidth.fit(form.focus == .body ? " > Body" : "   Body", to: label))
    body.append(bodyWindow.text, form.focus == .body ? .bold : .plain)
    lines += [title, StyledLine(), body]
    let count = form.title.text.count
    if count > Reducer.maximumTitleLength {
      lines.append(StyledLine())
      lines.append(
        StyledLine(
          " The title has \(count) characters; at most \(Reducer.maximumTitleLength) are accepted.",
          .warning))
    }
    let cursor =
      form.focus == .title
      ? RenderedScreen.Cursor(row: 2, column: label + titleWindow.cursorColumn)
      : RenderedScreen.Cursor(row: 4, column: label + bodyWindow.cursorColumn)
    return (lines, cursor)
  }

  private static func promptLines(_ prompt: Prompt, width: Int)
    -> (lines: [StyledLine], cursor: RenderedScreen.Cursor)
  {
    let question: String
    switch prompt.purpose {
    case .uploadPath: question = " Path of the photo to upload:"
    }
    let window = prompt.editor.window(width: width - 4)
    let lines = [StyledLine(question, .bold), StyledLine(), StyledLine(" > " + window.text)]
    return (lines, RenderedScreen.Cursor(row: 2, column: 3 + window.cursorColumn))
  }

  /// " Queued clip.mp4  42% sending", one per queued upload; the last says how many more
  /// when they do not all fit.
  private static func queuedLines(_ state: TUIState, rows: Int) -> [StyledLine] {
    let all = state.queuedUploads
    guard rows > 0 else { return [] }
    let shown = all.count > rows ? Array(all.prefix(rows - 1)) : all
    var lines = shown.map { item -> StyledLine in
      var line = StyledLine(" Queued \(LogText.escaped(item.name))  ", .bold)
      if item.isRefused {
        line.append("refused: kept until you discard it", .error)
      } else {
        line.append("\(item.percent)%", item.isSending ? .success : .dim)
        line.append(item.isSending ? " sending" : " waiting to be sent", .dim)
      }
      return line
    }
    if all.count > rows {
      lines.append(StyledLine(" … and \(all.count - shown.count) more queued uploads", .dim))
    }
    return lines
  }

  private static func uploadLine(_ upload: UploadState, width: Int) -> StyledLine {
    var line = StyledLine(" Photo \(upload.fileName)  ", .bold)
    switch upload.phase {
    case .compressing:
      line.append("making it smaller…", .dim)
    case .uploading:
      let percent = Int((upload.fraction * 100).rounded(.down))
      let barWidth = max(10, min(40, width / 4))
      let filled = Int((upload.fraction * Double(barWidth)).rounded(.down))
      line.append("[" + String(repeating: "#", count: filled), .success)
      line.append(String(repeating: ".", count: barWidth - filled) + "]", .dim)
      line.append(
        " \(percent)%  \(CompressionDecision.formatBytes(upload.sent)) of \(CompressionDecision.formatBytes(upload.total))"
      )
    case .retrying(let attempt, let delay):
      line.append(
        "attempt \(attempt) failed, trying again in \(UserMessages.formatWait(delay))…", .warning)
    case .succeeded:
      line.append("uploaded.", .success)
    case .failed(let message):
      line.append("not uploaded: \(message)", .error)
    }
    return line
  }

  private static func statusLine(_ state: TUIState) -> StyledLine {
    if case .confirmDelete(_, let title) = state.screen {
      var line = StyledLine(" Delete “", .warning)
      line.append(DisplayWidth.truncate(LogText.escaped(title), to: 40), .bold)
      line.append("”? y: delete, n: keep", .warning)
      return line
    }
    return StyledLine(" " + (state.statusMessage ?? ""))
  }

  private static func footer(for screen: Screen) -> String {
    switch screen {
    case .list: return " r refresh  a add  e edit  d delete  s sync  u upload  ? help  q quit"
    case .detail: return " ↑↓ scroll  Esc back  e edit  d delete  r refresh  ? help  q quit"
    case .help: return " Any key: back"
    case .editForm: return " Tab: other field  Enter: next / save  Esc: cancel"
    case .prompt: return " Enter: upload  Esc: cancel"
    case .confirmDelete: return " y: delete  n or Esc: keep"
    }
  }
}
