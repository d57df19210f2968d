import CourierDomain

/// The interface's decisions as pure functions: a key or a core update in, a new state and the
/// actions to run out. No I/O, so every behaviour is tested without a terminal.
package enum Reducer {
  /// The longest title the reference backend accepts.
  package static let maximumTitleLength = 200

  /// Applies an input event.
  /// - Parameters:
  ///   - state: the state before.
  ///   - event: the key or resize.
  ///   - size: the terminal's size (for page moves and scrolling).
  /// - Returns: the state after, and the actions to run, in order.
  package static func reduce(_ state: TUIState, _ event: InputEvent, size: TerminalSize)
    -> (TUIState, [TUIAction])
  {
    var state = state
    let actions = reduce(&state, event, size: size)
    return (state, actions)
  }

  /// Applies an input event in place.
  /// - Parameters:
  ///   - state: the state, updated.
  ///   - event: the key or resize.
  ///   - size: the terminal's size.
  /// - Returns: the actions to run, in order.
  package static func reduce(_ state: inout TUIState, _ event: InputEvent, size: TerminalSize)
    -> [TUIAction]
  {
    switch event {
    case .resize(let newSize):
      clamp(&state, size: newSize)
      return []
    case .key(.control("c")):
      return [.quit]
    case .key(let key):
      let actions: [TUIAction]
      switch state.screen {
      case .list: actions = list(&state, key, size: size)
      case .detail(let id, let scroll): actions = detail(&state, key, id: id, scroll: scroll, size)
      case .help:
        state.screen = .list
        actions = []
      case .editForm(let form): actions = editForm(&state, key, form)
      case .prompt(let prompt): actions = self.prompt(&state, key, prompt)
      case .confirmDelete(let id, _): actions = confirmDelete(&state, key, id: id)
      }
      clamp(&state, size: size)
      return actions
    }
  }

  /// The status line shown while an action runs; the event loop clears it when the action
  /// ends without an error, unless something else was said meanwhile.
  /// - Parameter action: the action.
  /// - Returns: the message, or nil when none is shown.
  package static func progressMessage(for action: TUIAction) -> String? {
    switch action {
    case .refresh: return "Refreshing…"
    case .syncNow: return "Sending pending changes…"
    case .addArticle: return "Adding…"
    case .editArticle: return "Saving…"
    case .deleteArticle: return "Deleting…"
    case .upload, .quit: return nil
    }
  }

  /// Applies a change reported by the core.
  /// - Parameters:
  ///   - update: the change.
  ///   - state: the state, updated.
  ///   - size: the terminal's size.
  package static func apply(_ update: TUIUpdate, to state: inout TUIState, size: TerminalSize) {
    switch update {
    case .path(let path): state.path = path
    case .metered(let metered): state.isMetered = metered
    case .outbox(let pending, let isSyncing):
      state.pendingCount = max(0, pending)
      state.isSyncing = isSyncing
    case .issues(let rejected, let conflicts):
      state.rejected = rejected
      state.conflicts = conflicts
    case .articles(let articles, let source):
      let selectedID = state.selectedArticle?.id
      state.articles = articles
      state.source = source
      if let selectedID, let index = articles.firstIndex(where: { $0.id == selectedID }) {
        state.selection = index
      }
      switch state.screen {
      case .detail(let id, _) where !articles.contains(where: { $0.id == id }):
        state.screen = .list
        state.statusMessage = "This article is gone (deleted here or elsewhere)."
      case .confirmDelete(let id, _) where !articles.contains(where: { $0.id == id }):
        state.screen = .list
      default: break
      }
    case .refreshFailed(let message): state.refreshError = message
    case .sendBlocked(let message): state.sendBlocked = message
    case .upload(let upload): state.upload = upload
    case .queuedUploads(let uploads): state.queuedUploads = uploads
    case .status(let message): state.statusMessage = message
    }
    clamp(&state, size: size)
  }

  // MARK: - Screens

  private static func list(_ state: inout TUIState, _ key: Key, size: TerminalSize)
    -> [TUIAction]
  {
    state.statusMessage = nil
    let page = max(1, Layout(state: state, size: size).listHeight - 1)
    switch key {
    case .up, .character("k"): state.selection -= 1
    case .down, .character("j"): state.selection += 1
    case .pageUp: state.selection -= page
    case .pageDown: state.selection += page
    case .home, .character("g"): state.selection = 0
    case .end, .character("G"): state.selection = state.articles.count - 1
    case .enter, .right, .character("l"):
      if let article = state.selectedArticle {
        state.screen = .detail(id: article.id, scroll: 0)
      }
    case .escape:
      if let upload = state.upload, upload.phase.isFinished { state.upload = nil }
    default:
      return common(&state, key, article: state.selectedArticle)
    }
    return []
  }

  private static func detail(
    _ state: inout TUIState, _ key: Key, id: String, scroll: Int, _ size: TerminalSize
  ) -> [TUIAction] {
    state.statusMessage = nil
    guard let article = state.articles.first(where: { $0.id == id }) else {
      state.screen = .list
      return []
    }
    let layout = Layout(state: state, size: size)
    let page = max(1, layout.listHeight - 1)
    let last = max(0, layout.detailLines(for: article, in: state).count - layout.listHeight)
    var scroll = scroll
    switch key {
    case .up, .character("k"): scroll -= 1
    case .down, .character("j"): scroll += 1
    case .pageUp: scroll -= page
    case .pageDown, .character(" "): scroll += page
    case .home, .character("g"): scroll = 0
    case .end, .character("G"): scroll = last
    case .escape, .left, .backspace, .character("h"):
      state.screen = .list
      return []
    default:
      return common(&state, key, article: article)
    }
    state.screen = .detail(id: id, scroll: min(max(0, scroll), last))
    return []
  }

  /// The commands of the list and the detail view.
  private static func common(_ state: inout TUIState, _ key: Key, article: ArticleItem?)
    -> [TUIAction]
  {
    switch key {
    case .character("q"): return [.quit]
    case .character("r"):
      state.statusMessage = progressMessage(for: .refresh)
      return [.refresh]
    case .character("s"):
      state.statusMessage =
        state.pendingCount == 0
        ? "Nothing waiting to be sent." : progressMessage(for: .syncNow)
      return [.syncNow]
    case .character("a"):
      state.screen = .editForm(EditForm(articleID: nil))
    case .character("e"):
      guard let article else {
        state.statusMessage = "No article to edit."
        return []
      }
      state.screen = .editForm(
        EditForm(articleID: article.id, title: article.title, body: article.body))
    case .character("d"):
      guard let article else {
        state.statusMessage = "No article to delete."
        return []
      }
      state.screen = .confirmDelete(id: article.id, title: article.title)
    case .character("u"):
      state.screen = .prompt(Prompt(purpose: .uploadPath))
    case .character("?"), .function(1):
      state.screen = .help
    default:
      break
    }
    return []
  }

  private static func editForm(_ state: inout TUIState, _ key: Key, _ form: EditForm)
    -> [TUIAction]
  {
    var form = form
    state.statusMessage = nil
    switch key {
    case .escape:
      state.screen = .list
      state.statusMessage = form.articleID == nil ? "Article not added." : "Changes discarded."
      return []
    case .tab, .backTab, .up, .down:
      form.focus = form.focus == .title ? .body : .title
    case .enter where form.focus == .title:
      form.focus = .body
    case .enter:
      let title = form.title.text.trimmingSpaces
      if title.isEmpty {
        state.statusMessage = "A title is needed."
        form.focus = .title
      } else if title.count > maximumTitleLength {
        state.statusMessage = "A title can have at most \(maximumTitleLength) characters."
        form.focus = .title
      } else {
        state.screen = .list
        if let id = form.articleID {
          let action = TUIAction.editArticle(id: id, title: title, body: form.body.text)
          state.statusMessage = progressMessage(for: action)
          return [action]
        }
        let action = TUIAction.addArticle(title: title, body: form.body.text)
        state.statusMessage = progressMessage(for: action)
        return [action]
      }
    default:
      switch form.focus {
      case .title: form.title.handle(key)
      case .body: form.body.handle(key)
      }
    }
    state.screen = .editForm(form)
    return []
  }

  private static func prompt(_ state: inout TUIState, _ key: Key, _ prompt: Prompt)
    -> [TUIAction]
  {
    var prompt = prompt
    state.statusMessage = nil
    switch key {
    case .escape:
      state.screen = .list
      state.statusMessage = "Upload cancelled."
      return []
    case .enter:
      let path = prompt.editor.text.trimmingSpaces
      guard !path.isEmpty else {
        state.statusMessage = "Type the path of a photo, or press Escape to cancel."
        return []
      }
      state.screen = .list
      return [.upload(path: path)]
    default:
      prompt.editor.handle(key)
    }
    state.screen = .prompt(prompt)
    return []
  }

  private static func confirmDelete(_ state: inout TUIState, _ key: Key, id: String)
    -> [TUIAction]
  {
    switch key {
    case .character("y"), .character("Y"):
      state.screen = .list
      state.statusMessage = progressMessage(for: .deleteArticle(id: id))
      return [.deleteArticle(id: id)]
    case .character("n"), .character("N"), .escape, .character("q"):
      state.screen = .list
      state.statusMessage = "Not deleted."
    default:
      break
    }
    return []
  }

  /// Keeps the selection inside the list and on screen.
  private static func clamp(_ state: inout TUIState, size: TerminalSize) {
    let count = state.articles.count
    state.selection = count == 0 ? 0 : min(max(0, state.selection), count - 1)
    let height = max(1, Layout(state: state, size: size).listHeight)
    if state.selection < state.scrollOffset { state.scrollOffset = state.selection }
    if state.selection >= state.scrollOffset + height {
      state.scrollOffset = state.selection - height + 1
    }
    state.scrollOffset = min(max(0, state.scrollOffset), max(0, count - height))
  }
}

extension UploadPhase {
  /// Whether the upload is over (succeeded or failed).
  package var isFinished: Bool {
    switch self {
    case .succeeded, .failed: return true
    case .compressing, .uploading, .retrying: return false
    }
  }
}

extension String {
  /// The text without leading and trailing spaces (Foundation-free).
  var trimmingSpaces: String {
    let characters = Substring(self)
    let start = characters.firstIndex { !$0.isWhitespace } ?? characters.endIndex
    let end = characters.lastIndex { !$0.isWhitespace }.map { characters.index(after: $0) }
    return String(characters[start..<(end ?? start)])
  }
}
