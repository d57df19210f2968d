import CourierDomain
import Testing

@testable import CourierTUI

@Suite("Reducer")
struct ReducerTests {
  static let size = TerminalSize(rows: 24, columns: 80)

  static func articles(_ count: Int) -> [ArticleItem] {
    (0..<count).map { ArticleItem(id: "id\($0)", title: "Title \($0)", body: "Body \($0)") }
  }

  /// Presses keys in order, collecting the actions.
  static func press(_ keys: [Key], _ state: TUIState) -> (TUIState, [TUIAction]) {
    var state = state
    var actions: [TUIAction] = []
    for key in keys { actions += Reducer.reduce(&state, .key(key), size: size) }
    return (state, actions)
  }

  static func type(_ text: String) -> [Key] { text.map { .character($0) } }

  @Test(
    "single keys on the list ask for the right action",
    arguments: [
      (Key.character("r"), [TUIAction.refresh]),
      (.character("s"), [.syncNow]),
      (.character("q"), [.quit]),
      (.control("c"), [.quit]),
      (.character("x"), []),
    ])
  func listKeys(key: Key, expected: [TUIAction]) {
    let (_, actions) = Self.press([key], TUIState(articles: Self.articles(3)))
    #expect(actions == expected)
  }

  @Test("the queued uploads the core reports replace the ones shown; the list gets shorter")
  func queuedUploads() {
    var state = TUIState(articles: Self.articles(40))
    let before = Layout(state: state, size: Self.size).listHeight
    let items = [
      QueuedUploadItem(name: "a.bin", percent: 10), QueuedUploadItem(name: "b", percent: 0),
    ]
    Reducer.apply(.queuedUploads(items), to: &state, size: Self.size)
    #expect(state.queuedUploads == items)
    #expect(Layout(state: state, size: Self.size).listHeight == before - 2)
    Reducer.apply(.queuedUploads([]), to: &state, size: Self.size)
    #expect(state.queuedUploads.isEmpty)
  }

  @Test("Ctrl-C quits from every screen, even half-way through typing")
  func controlCEverywhere() {
    let screens: [Screen] = [
      .list, .detail(id: "id0", scroll: 0), .help, .editForm(EditForm(articleID: nil)),
      .prompt(Prompt(purpose: .uploadPath)), .confirmDelete(id: "id0", title: "Title 0"),
    ]
    for screen in screens {
      let (_, actions) = Self.press(
        [.control("c")], TUIState(articles: Self.articles(2), screen: screen))
      #expect(actions == [.quit], "\(screen)")
    }
  }

  @Test("moving down past the screen scrolls; the selection never leaves the list")
  func scrolling() {
    let start = TUIState(articles: Self.articles(50))
    let height = Layout(state: start, size: Self.size).listHeight
    var (state, _) = Self.press(Array(repeating: .down, count: height), start)
    #expect(state.selection == height)
    #expect(state.scrollOffset == 1)
    (state, _) = Self.press([.end], state)
    #expect(state.selection == 49)
    #expect(state.scrollOffset == 50 - height)
    (state, _) = Self.press([.down, .pageDown], state)
    #expect(state.selection == 49)
    (state, _) = Self.press([.home, .up, .pageUp], state)
    #expect(state.selection == 0 && state.scrollOffset == 0)
  }

  @Test("Enter opens the detail, Escape goes back")
  func detail() {
    var (state, _) = Self.press([.down, .enter], TUIState(articles: Self.articles(3)))
    #expect(state.screen == .detail(id: "id1", scroll: 0))
    (state, _) = Self.press([.escape], state)
    #expect(state.screen == .list)
    #expect(state.selection == 1)
  }

  @Test("d asks first; y deletes, n and Escape keep")
  func deleteConfirmation() {
    let start = TUIState(articles: Self.articles(3), selection: 2)
    let (asking, none) = Self.press([.character("d")], start)
    #expect(asking.screen == .confirmDelete(id: "id2", title: "Title 2"))
    #expect(none.isEmpty)
    let (_, ignored) = Self.press([.character("x"), .enter], asking)
    #expect(ignored.isEmpty)
    let (deleted, actions) = Self.press([.character("y")], asking)
    #expect(actions == [.deleteArticle(id: "id2")])
    #expect(deleted.screen == .list)
    for key in [Key.character("n"), .escape] {
      let (kept, actions) = Self.press([key], asking)
      #expect(actions.isEmpty)
      #expect(kept.screen == .list)
      #expect(kept.statusMessage == "Not deleted.")
    }
  }

  @Test("d on an empty list explains instead of asking")
  func deleteNothing() {
    let (state, actions) = Self.press([.character("d")], TUIState())
    #expect(actions.isEmpty && state.screen == .list)
    #expect(state.statusMessage == "No article to delete.")
  }

  @Test("u prompts for a path, edited with the line editor, then asks for the upload")
  func uploadPrompt() {
    let keys: [Key] =
      [.character("u")] + Self.type("~/photos/plage.jpgx") + [.backspace, .home, .delete]
      + Self.type("~") + [.enter]
    let (state, actions) = Self.press(keys, TUIState(articles: Self.articles(1)))
    #expect(actions == [.upload(path: "~/photos/plage.jpg")])
    #expect(state.screen == .list)
  }

  @Test("an empty path keeps the prompt open; Escape cancels it")
  func uploadPromptEmpty() {
    let (state, actions) = Self.press([.character("u"), .character(" "), .enter], TUIState())
    #expect(actions.isEmpty)
    guard case .prompt = state.screen else {
      Issue.record("the prompt closed: \(state.screen)")
      return
    }
    let (cancelled, none) = Self.press([.escape], state)
    #expect(none.isEmpty && cancelled.screen == .list)
  }

  @Test("a adds: Enter goes from title to body, then saves; UTF-8 text is kept")
  func addArticle() {
    let keys: [Key] =
      [.character("a")] + Self.type("Café 東京 🎉") + [.enter] + Self.type("Corps") + [.enter]
    let (state, actions) = Self.press(keys, TUIState())
    #expect(actions == [.addArticle(title: "Café 東京 🎉", body: "Corps")])
    #expect(state.screen == .list)
  }

  @Test("e edits the selected article, pre-filled; Tab switches field")
  func editArticle() {
    let keys: [Key] =
      [.down, .character("e"), .backspace] + Self.type("!") + [.tab, .end] + Self.type("+") + [
        .enter
      ]
    let (_, actions) = Self.press(keys, TUIState(articles: Self.articles(3)))
    #expect(actions == [.editArticle(id: "id1", title: "Title !", body: "Body 1+")])
  }

  @Test("a blank or too long title is refused with a message and the form stays")
  func titleValidation() {
    let blank = Self.press([.character("a"), .character(" "), .tab, .enter], TUIState())
    #expect(blank.1.isEmpty)
    #expect(blank.0.statusMessage == "A title is needed.")
    let long = Self.press(
      [.character("a")] + Self.type(String(repeating: "x", count: 201)) + [.tab, .enter],
      TUIState())
    #expect(long.1.isEmpty)
    #expect(long.0.statusMessage == "A title can have at most 200 characters.")
    guard case .editForm(let form) = long.0.screen else {
      Issue.record("the form closed")
      return
    }
    #expect(form.focus == .title)
  }

  @Test("Escape in the form discards it")
  func cancelForm() {
    let (state, actions) = Self.press(
      [.character("a")] + Self.type("draft") + [.escape], TUIState())
    #expect(actions.isEmpty && state.screen == .list)
    #expect(state.statusMessage == "Article not added.")
  }

  @Test("? shows the help, any key closes it")
  func help() {
    let (help, _) = Self.press([.character("?")], TUIState())
    #expect(help.screen == .help)
    let (closed, actions) = Self.press([.character("r")], help)
    #expect(closed.screen == .list && actions.isEmpty)
  }

  @Test("new articles keep the selection on the same article")
  func selectionFollowsID() {
    var state = TUIState(articles: Self.articles(3), selection: 1)
    let fresh = [ArticleItem(id: "new", title: "New", body: "")] + Self.articles(3)
    Reducer.apply(.articles(fresh, source: .network), to: &state, size: Self.size)
    #expect(state.selectedArticle?.id == "id1")
    Reducer.apply(.articles([], source: .network), to: &state, size: Self.size)
    #expect(state.selection == 0 && state.scrollOffset == 0)
  }

  @Test("the detail of an article deleted elsewhere closes with a message")
  func detailGone() {
    var state = TUIState(articles: Self.articles(2), screen: .detail(id: "id1", scroll: 0))
    Reducer.apply(.articles(Array(Self.articles(1)), source: .network), to: &state, size: Self.size)
    #expect(state.screen == .list)
    #expect(state.statusMessage != nil)
  }

  @Test("core updates land in the state")
  func updates() {
    var state = TUIState()
    Reducer.apply(.path(.unsatisfied), to: &state, size: Self.size)
    Reducer.apply(.outbox(pending: 3, isSyncing: true), to: &state, size: Self.size)
    Reducer.apply(.refreshFailed(message: "offline"), to: &state, size: Self.size)
    Reducer.apply(
      .upload(UploadState(fileName: "a.jpg", phase: .compressing)), to: &state, size: Self.size)
    #expect(state.path == .unsatisfied && state.pendingCount == 3 && state.isSyncing)
    #expect(state.refreshError == "offline")
    #expect(state.upload?.phase == .compressing)
  }

  @Test("Escape dismisses a finished upload, not a running one")
  func dismissUpload() {
    let running = TUIState(upload: UploadState(fileName: "a.jpg", phase: .uploading))
    #expect(Self.press([.escape], running).0.upload != nil)
    let done = TUIState(upload: UploadState(fileName: "a.jpg", phase: .succeeded))
    #expect(Self.press([.escape], done).0.upload == nil)
  }

  @Test("the detail scrolls within the body's length")
  func detailScroll() {
    let long = ArticleItem(
      id: "x", title: "Long", body: (1...100).map { "Line \($0)" }.joined(separator: "\n"))
    let state = TUIState(articles: [long], screen: .detail(id: "x", scroll: 0))
    let (end, _) = Self.press([.end, .down, .down], state)
    guard case .detail(_, let scroll) = end.screen else {
      Issue.record("left the detail")
      return
    }
    let layout = Layout(state: state, size: Self.size)
    #expect(scroll == layout.detailLines(for: long, in: state).count - layout.listHeight)
    let (top, _) = Self.press([.pageDown, .home, .up], state)
    #expect(top.screen == .detail(id: "x", scroll: 0))
  }
}
