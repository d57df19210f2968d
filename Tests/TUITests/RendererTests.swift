import CourierDomain
import Testing

@testable import CourierTUI

@Suite("Renderer")
struct RendererTests {
  static let narrow = TerminalSize(rows: 24, columns: 80)
  static let wide = TerminalSize(rows: 40, columns: 120)

  static let articles = [
    ArticleItem(id: "1", title: "Lunch in Lyon", body: "A bouchon near the river."),
    ArticleItem(id: "2", title: "Written offline", body: "Waiting.", isPending: true),
    ArticleItem(id: "3", title: "Edited twice", body: "Conflict.", isConflicted: true),
  ]

  static func lines(_ state: TUIState, _ size: TerminalSize = narrow) -> [String] {
    Renderer.render(state, size: size, colour: false).lines
  }

  /// Removes SGR sequences (ESC [ … m).
  static func stripSGR(_ text: String) -> String {
    var out = ""
    var inEscape = false
    for scalar in text.unicodeScalars {
      if inEscape {
        if scalar == "m" { inEscape = false }
      } else if scalar == "\u{1B}" {
        inEscape = true
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  static func trimmed(_ line: String) -> String {
    String(line.reversed().drop { $0 == " " }.reversed())
  }

  static let states: [(String, TUIState)] = [
    ("idle", TUIState(path: .satisfied, articles: articles, source: .network)),
    (
      "offline",
      TUIState(path: .unsatisfied, articles: articles, source: .cache(age: .seconds(300)))
    ),
    ("syncing", TUIState(path: .satisfied, pendingCount: 2, isSyncing: true, articles: articles)),
    (
      "rejected",
      TUIState(
        rejected: [
          SyncIssue(articleID: "2", title: "Create “Written offline”", message: "Title too long.")
        ],
        articles: articles)
    ),
    (
      "conflict",
      TUIState(
        conflicts: [
          SyncIssue(articleID: "3", title: "Edit “Edited twice”", message: "Changed elsewhere.")
        ],
        articles: articles)
    ),
    (
      "uploading",
      TUIState(
        articles: articles,
        upload: UploadState(fileName: "plage.jpg", sent: 42, total: 100, phase: .uploading))
    ),
    ("help", TUIState(articles: articles, screen: .help)),
    ("detail", TUIState(articles: articles, screen: .detail(id: "3", scroll: 0))),
    (
      "form",
      TUIState(articles: articles, screen: .editForm(EditForm(articleID: "1", title: "Lunch")))
    ),
    ("prompt", TUIState(screen: .prompt(Prompt(purpose: .uploadPath, text: "~/a.jpg")))),
    (
      "confirm",
      TUIState(articles: articles, screen: .confirmDelete(id: "1", title: "Lunch in Lyon"))
    ),
    ("too small", TUIState(articles: articles)),
  ]

  @Test("every state fills the terminal exactly: one line per row, each as wide as the terminal")
  func exactSize() {
    for (name, state) in Self.states {
      for size in [Self.narrow, Self.wide, TerminalSize(rows: 20, columns: 60)] {
        let lines = Self.lines(state, size)
        #expect(lines.count == size.rows, "\(name) \(size)")
        for line in lines {
          #expect(DisplayWidth.of(line) == size.columns, "\(name) \(size): \(line)")
        }
      }
    }
  }

  @Test("without colour there is no escape sequence; with colour, the same text styled")
  func colour() {
    for (name, state) in Self.states {
      let plain = Renderer.render(state, size: Self.narrow, colour: false).lines
      let styled = Renderer.render(state, size: Self.narrow, colour: true).lines
      #expect(!plain.joined().contains("\u{1B}"), "\(name)")
      #expect(styled.joined().contains("\u{1B}["), "\(name)")
      #expect(styled.map(Self.stripSGR) == plain, "\(name)")
    }
  }

  @Test("the header says Offline when the path is unsatisfied, with what waits")
  func offline() {
    let header = Self.lines(TUIState(path: .unsatisfied, articles: Self.articles))[0]
    #expect(header.hasSuffix(" Offline  "))
    #expect(!header.contains("Syncing"))
    let waiting = Self.lines(TUIState(path: .unsatisfied, pendingCount: 2))[0]
    #expect(waiting.contains("Offline · 2 pending"))
  }

  @Test("the header says Syncing N pending while the outbox is not empty")
  func syncing() {
    let header = Self.lines(TUIState(path: .satisfied, pendingCount: 2, articles: Self.articles))[0]
    #expect(header.contains("Syncing 2 pending"))
    #expect(!header.contains("Offline"))
  }

  @Test("a metered path is marked in the header, before the portal or sync badge")
  func metered() {
    var state = TUIState(path: .satisfied, articles: Self.articles, source: .cache(age: .zero))
    Reducer.apply(.metered(true), to: &state, size: Self.narrow)
    #expect(Renderer.badge(for: state) == "metered")
    #expect(Self.lines(state)[0].contains("metered"))
    state.pendingCount = 2
    #expect(Renderer.badge(for: state) == "metered · Syncing 2 pending")
    state.path = .captivePortal
    #expect(Renderer.badge(for: state) == "metered · Wi-Fi login needed · 2 pending")
    state.path = .unsatisfied
    #expect(Renderer.badge(for: state) == "Offline · 2 pending")
    Reducer.apply(.metered(false), to: &state, size: Self.narrow)
    state.path = .satisfied
    #expect(Renderer.badge(for: state) == "Syncing 2 pending")
  }

  @Test("when sending stopped with the path up, the header says Not sent, and why")
  func blocked() {
    let message = "The network answered, but not your server: a Wi-Fi login page?"
    let state = TUIState(
      path: .satisfied, pendingCount: 3, articles: Self.articles, source: .cache(age: .zero),
      sendBlocked: message)
    let lines = Self.lines(state)
    #expect(lines[0].contains("Not sent · 3 pending"))
    #expect(!lines[0].contains("Syncing"))
    #expect(lines[1].contains("Not sent: The network answered, but not your server"))
    var sending = state
    sending.isSyncing = true
    #expect(Renderer.badge(for: sending) == "Syncing 3 pending")
    var empty = state
    empty.pendingCount = 0
    #expect(Renderer.badge(for: empty) == nil)
    #expect(!Self.lines(empty)[1].contains("Not sent"))
    var offline = state
    offline.path = .unsatisfied
    #expect(Renderer.badge(for: offline) == "Offline · 3 pending")
    var portal = state
    portal.path = .captivePortal
    #expect(Renderer.badge(for: portal) == "Wi-Fi login needed · 3 pending")
    portal.pendingCount = 0
    #expect(Renderer.badge(for: portal) == "Wi-Fi login needed")
  }

  @Test(
    "the header shows nothing when online (or not known yet) with nothing pending",
    arguments: [PathStatus.satisfied, .unknown])
  func idle(path: PathStatus) {
    let header = Self.lines(TUIState(path: path, articles: Self.articles, source: .network))[0]
    #expect(Self.trimmed(header) == " Courier · Articles")
    #expect(Renderer.badge(for: TUIState(path: path)) == nil)
  }

  @Test("refused operations and conflicts show with their messages; flags mark the rows")
  func issues() {
    let state = TUIState(
      rejected: [
        SyncIssue(articleID: "2", title: "Create “Written offline”", message: "Title too long.")
      ],
      conflicts: [
        SyncIssue(articleID: "3", title: "Edit “Edited twice”", message: "Changed elsewhere.")
      ],
      articles: Self.articles)
    let lines = Self.lines(state)
    #expect(lines[2].hasPrefix(" ! Refused: Create “Written offline”: Title too long."))
    #expect(lines[3].hasPrefix(" ! Conflict: Edit “Edited twice”: Changed elsewhere."))
    #expect(lines.contains { $0.hasPrefix("  * Written offline") })
    #expect(lines.contains { $0.hasPrefix("  ! Edited twice") })
    #expect(lines.contains { $0.hasPrefix(">   Lunch in Lyon") })
  }

  @Test("past three issues, the last line counts the rest")
  func manyIssues() {
    let issues = (1...5).map { SyncIssue(title: "Op \($0)", message: "No.") }
    let lines = Self.lines(TUIState(rejected: issues))
    #expect(lines[3].contains("Op 2"))
    #expect(lines[4].hasPrefix(" … and 3 more"))
  }

  @Test("an upload at 42% shows a bar, the percentage and the sizes")
  func uploading() {
    let state = TUIState(
      articles: Self.articles,
      upload: UploadState(fileName: "plage.jpg", sent: 420_000, total: 1_000_000, phase: .uploading)
    )
    let line = Self.lines(state)[21]
    #expect(
      Self.trimmed(line) == " Photo plage.jpg  [########............] 42%  420 KB of 1.0 MB")
  }

  @Test("a line per queued upload with its percentage, above the upload line")
  func queuedUploads() {
    let state = TUIState(
      pendingCount: 2, articles: Self.articles,
      upload: UploadState(fileName: "plage.jpg", sent: 42, total: 100, phase: .uploading),
      queuedUploads: [
        QueuedUploadItem(name: "train.mp4", percent: 37, isSending: true),
        QueuedUploadItem(name: "notes.pdf", percent: 0),
      ])
    let lines = Self.lines(state)
    #expect(Self.trimmed(lines[19]) == " Queued train.mp4  37% sending")
    #expect(Self.trimmed(lines[20]) == " Queued notes.pdf  0% waiting to be sent")
    #expect(lines[21].hasPrefix(" Photo plage.jpg"))
    // The queued uploads are in the header's count too.
    #expect(lines[0].contains("Syncing 2 pending"))
  }

  @Test("more queued uploads than lines: the last line says how many more; refused ones say so")
  func manyQueuedUploads() {
    let state = TUIState(
      articles: Self.articles,
      queuedUploads: [
        QueuedUploadItem(name: "a.bin", percent: 100, isRefused: true),
        QueuedUploadItem(name: "b.bin", percent: 5),
        QueuedUploadItem(name: "c.bin", percent: 0),
      ])
    let lines = Self.lines(state)
    #expect(Self.trimmed(lines[20]) == " Queued a.bin  refused: kept until you discard it")
    #expect(Self.trimmed(lines[21]) == " … and 2 more queued uploads")
    // Other screens keep their room: the help shows no queued line.
    var help = state
    help.screen = .help
    #expect(!Self.lines(help).contains { $0.contains("Queued") })
  }

  @Test(
    "the other upload phases say what happens",
    arguments: [
      (UploadPhase.compressing, "making it smaller…"),
      (.retrying(attempt: 2, delay: .seconds(3)), "attempt 2 failed, trying again in 3 seconds…"),
      (.succeeded, "uploaded."),
      (
        .failed(message: "This file is too large for the server."),
        "not uploaded: This file is too large for the server."
      ),
    ])
  func uploadPhases(phase: UploadPhase, text: String) {
    let line = Self.lines(TUIState(upload: UploadState(fileName: "a.jpg", phase: phase)))[21]
    #expect(Self.trimmed(line) == " Photo a.jpg  " + text)
  }

  @Test("the source line tells the cache's age and why the refresh failed")
  func source() {
    let state = TUIState(source: .cache(age: .seconds(300)), refreshError: "You're offline.")
    #expect(
      Self.trimmed(Self.lines(state)[1])
        == " Saved copy from 5 minutes ago · Couldn't refresh: You're offline.")
    #expect(Self.trimmed(Self.lines(TUIState(source: .network))[1]) == " Up to date")
  }

  @Test("80 columns show titles only; wider terminals add the start of the body")
  func widths() {
    let state = TUIState(articles: Self.articles)
    #expect(!Self.lines(state, Self.narrow).joined().contains("bouchon"))
    #expect(Self.lines(state, Self.wide).joined().contains("A bouchon near the river."))
  }

  @Test("long UTF-8 titles are cut by display width, CJK and emoji included")
  func longTitles() {
    let cjk = String(repeating: "東京の天気", count: 20)
    let emoji = String(repeating: "🎉", count: 60)
    let state = TUIState(articles: [
      ArticleItem(id: "c", title: cjk, body: ""), ArticleItem(id: "e", title: emoji, body: ""),
      ArticleItem(id: "a", title: String(repeating: "é", count: 100), body: ""),
    ])
    for size in [Self.narrow, Self.wide] {
      let lines = Self.lines(state, size)
      let rows = lines.filter { $0.contains("東") || $0.contains("🎉") || $0.contains("é") }
      #expect(rows.count == 3)
      for row in rows {
        #expect(DisplayWidth.of(row) == size.columns)
        #expect(row.contains("…"))
      }
      // Title column at 80: 80 - 5 columns = 75; CJK characters are 2 wide: 37 of them + "…".
      if size == Self.narrow {
        #expect(rows[0] == ">   " + String(cjk.prefix(37)) + "…" + " ")
        #expect(rows[1] == "    " + String(emoji.prefix(37)) + "…" + " ")
      }
    }
  }

  @Test("a title cannot inject escape sequences, newlines or a bidi override")
  func hostileTitle() {
    let title = "a\u{1B}[2J\nb\u{202E}c"
    let state = TUIState(articles: [ArticleItem(id: "x", title: title, body: "")])
    let lines = Self.lines(state)
    #expect(!lines.joined().contains("\u{1B}"))
    #expect(!lines.joined().contains("\u{202E}"))
    // Shown as the CLI shows it (LogText): visible escapes, not blanks.
    #expect(lines.contains { $0.hasPrefix(#">   a\e[2J\nb\u{202E}c"#) }, "\(lines)")
  }

  @Test("a terminal under 80×24 gets a clear message instead of a broken layout")
  func tooSmall() {
    let lines = Self.lines(TUIState(articles: Self.articles), TerminalSize(rows: 20, columns: 60))
    #expect(lines.contains { $0.contains("at least 80×24") })
    #expect(lines.contains { $0.contains("This one is 60×20") })
  }

  @Test("the form puts the cursor after the typed text; the list hides it")
  func cursor() throws {
    let form = TUIState(screen: .editForm(EditForm(articleID: nil, title: "日本")))
    let screen = Renderer.render(form, size: Self.narrow, colour: false)
    let cursor = try #require(screen.cursor)
    #expect(cursor.column == 10 + 4)
    #expect(screen.lines[cursor.row].contains(" > Title  日本 "))
    #expect(Renderer.render(TUIState(), size: Self.narrow, colour: false).cursor == nil)
  }

  @Test("the delete confirmation names the article on the status line")
  func confirm() {
    let lines = Self.lines(
      TUIState(articles: Self.articles, screen: .confirmDelete(id: "1", title: "Lunch in Lyon")))
    #expect(Self.trimmed(lines[22]) == " Delete “Lunch in Lyon”? y: delete, n: keep")
  }

  @Test("a list longer than the screen says where the selection is")
  func position() {
    let many = (0..<100).map { ArticleItem(id: "\($0)", title: "T\($0)", body: "") }
    let lines = Self.lines(TUIState(articles: many, selection: 41, scrollOffset: 30))
    #expect(lines[2].hasSuffix(" 42/100 ──"))
    #expect(lines.contains { $0.hasPrefix(">   T41 ") })
    #expect(lines[3].hasPrefix("    T30 "))
  }

  @Test("the detail wraps the body and shows the article's own issues")
  func detail() {
    let article = ArticleItem(
      id: "3", title: "Edited twice", body: String(repeating: "word ", count: 40),
      isConflicted: true)
    let state = TUIState(
      conflicts: [SyncIssue(articleID: "3", title: "Edit", message: "Changed elsewhere.")],
      articles: [article], screen: .detail(id: "3", scroll: 0))
    let lines = Self.lines(state)
    #expect(lines.contains { $0.hasPrefix(" Edited twice") })
    #expect(lines.contains { $0.hasPrefix(" ! Edit: Changed elsewhere.") })
    #expect(lines.filter { $0.hasPrefix(" word word") }.count >= 2)
  }

  @Test("the whole help fits at 80×24, even with three issue lines and an upload")
  func helpFits() {
    let state = TUIState(
      rejected: (1...4).map { SyncIssue(title: "Op \($0)", message: "No.") },
      upload: UploadState(fileName: "a.jpg", phase: .compressing), screen: .help)
    let lines = Self.lines(state)
    #expect(lines.contains { $0.hasPrefix("   List        * waiting to be sent") })
    #expect(lines.contains { $0.hasPrefix(" Keys (any key closes this help)") })
  }
}
