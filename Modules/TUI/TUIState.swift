import CourierDomain

/// One article as the list shows it.
public struct ArticleItem: Sendable, Hashable, Identifiable {
  /// The article's id (a client-generated UUID).
  public var id: String
  /// The title.
  public var title: String
  /// The body.
  public var body: String
  /// Whether a local change to it waits in the outbox.
  public var isPending: Bool
  /// Whether the server refused a change to it because it changed elsewhere.
  public var isConflicted: Bool

  /// Creates a list item.
  /// - Parameters:
  ///   - id: the id.
  ///   - title: the title.
  ///   - body: the body.
  ///   - isPending: whether a change waits to be sent.
  ///   - isConflicted: whether it is in conflict.
  public init(
    id: String, title: String, body: String, isPending: Bool = false, isConflicted: Bool = false
  ) {
    self.id = id
    self.title = title
    self.body = body
    self.isPending = isPending
    self.isConflicted = isConflicted
  }
}

/// Where the articles on screen come from.
public enum ArticlesSource: Sendable, Hashable {
  /// Nothing loaded yet.
  case none
  /// The local cache, saved `age` ago (the network has not answered yet, or failed).
  case cache(age: Duration)
  /// A fresh answer from the server.
  case network
}

/// An operation the server refused, or a conflict, with the sentence to show.
public struct SyncIssue: Sendable, Hashable {
  /// The article concerned, when there is one.
  public var articleID: String?
  /// What the operation was about ("Create “Lunch”"), for a person.
  public var title: String
  /// The message for a person (from `UserMessages` or the server).
  public var message: String

  /// Creates an issue.
  /// - Parameters:
  ///   - articleID: the article concerned.
  ///   - title: what it was about.
  ///   - message: the message to show.
  public init(articleID: String? = nil, title: String, message: String) {
    self.articleID = articleID
    self.title = title
    self.message = message
  }
}

/// The phase of a photo upload.
public enum UploadPhase: Sendable, Hashable {
  /// Making the photo smaller before sending it.
  case compressing
  /// Sending bytes.
  case uploading
  /// Waiting before another attempt.
  case retrying(attempt: Int, delay: Duration)
  /// Done.
  case succeeded
  /// Given up, with the message for a person.
  case failed(message: String)
}

/// A photo upload in progress or just finished.
public struct UploadState: Sendable, Hashable {
  /// The file's name (not its full path).
  public var fileName: String
  /// Bytes sent so far.
  public var sent: Int64
  /// Bytes to send in all (0 when not known yet).
  public var total: Int64
  /// The phase.
  public var phase: UploadPhase

  /// Creates an upload state.
  /// - Parameters:
  ///   - fileName: the file's name.
  ///   - sent: bytes sent.
  ///   - total: bytes in all.
  ///   - phase: the phase.
  public init(fileName: String, sent: Int64 = 0, total: Int64 = 0, phase: UploadPhase) {
    self.fileName = fileName
    self.sent = sent
    self.total = total
    self.phase = phase
  }

  /// The fraction sent, from 0 to 1 (0 when the total is not known).
  public var fraction: Double {
    guard total > 0 else { return 0 }
    return min(1, max(0, Double(sent) / Double(total)))
  }
}

/// The add/edit form: two line editors.
public struct EditForm: Sendable, Hashable {
  /// Which field has the cursor.
  public enum Field: Sendable, Hashable {
    /// The title.
    case title
    /// The body.
    case body
  }

  /// The article edited, or nil for a new one.
  public var articleID: String?
  /// The title being typed.
  public var title: LineEditor
  /// The body being typed.
  public var body: LineEditor
  /// The field with the cursor.
  public var focus: Field

  /// Creates a form.
  /// - Parameters:
  ///   - articleID: the article edited, nil for a new one.
  ///   - title: the initial title.
  ///   - body: the initial body.
  ///   - focus: the field with the cursor.
  public init(articleID: String?, title: String = "", body: String = "", focus: Field = .title) {
    self.articleID = articleID
    self.title = LineEditor(text: title)
    self.body = LineEditor(text: body)
    self.focus = focus
  }
}

/// A one-line question: today only the path of a photo to upload.
public struct Prompt: Sendable, Hashable {
  /// What is asked.
  public enum Purpose: Sendable, Hashable {
    /// The path of a photo to upload.
    case uploadPath
  }

  /// What is asked.
  public var purpose: Purpose
  /// The answer being typed.
  public var editor: LineEditor

  /// Creates a prompt.
  /// - Parameters:
  ///   - purpose: what is asked.
  ///   - text: the initial answer.
  public init(purpose: Purpose, text: String = "") {
    self.purpose = purpose
    self.editor = LineEditor(text: text)
  }
}

/// Which screen is showing.
public enum Screen: Sendable, Hashable {
  /// The articles list.
  case list
  /// One article, its body scrolled by `scroll` lines.
  case detail(id: String, scroll: Int)
  /// The keys.
  case help
  /// Adding or editing an article.
  case editForm(EditForm)
  /// Asking for a line of text.
  case prompt(Prompt)
  /// Asking whether to delete an article.
  case confirmDelete(id: String, title: String)
}

/// Everything the terminal interface shows, as one value: the core's state (fed by the wiring
/// through `TUIUpdate`) and the interface's own (screen, selection, editors).
public struct TUIState: Sendable, Hashable {
  /// The network path, as the path monitor last said.
  public var path: PathStatus
  /// Operations waiting in the outbox.
  public var pendingCount: Int
  /// Whether the outbox is being sent right now.
  public var isSyncing: Bool
  /// Operations the server refused, with their messages.
  public var rejected: [SyncIssue]
  /// Conflicts waiting for a person, with their messages.
  public var conflicts: [SyncIssue]
  /// The articles, in display order.
  public var articles: [ArticleItem]
  /// Where the articles come from.
  public var source: ArticlesSource
  /// Why the last refresh failed, for a person; nil after a success.
  public var refreshError: String?
  /// Why the waiting changes are not going out although the path is up (the network answered,
  /// but not the server; the session expired…), for a person; nil once a send succeeds.
  public var sendBlocked: String?
  /// The current or last photo upload.
  public var upload: UploadState?
  /// The screen showing.
  public var screen: Screen
  /// The index of the selected article.
  public var selection: Int
  /// The index of the first article shown.
  public var scrollOffset: Int
  /// A short message for the status line, replaced by the next one or by a key press.
  public var statusMessage: String?

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
  ///   - screen: the screen.
  ///   - selection: the selected index.
  ///   - scrollOffset: the first index shown.
  ///   - statusMessage: the status line.
  public init(
    path: PathStatus = .unknown, pendingCount: Int = 0, isSyncing: Bool = false,
    rejected: [SyncIssue] = [], conflicts: [SyncIssue] = [], articles: [ArticleItem] = [],
    source: ArticlesSource = .none, refreshError: String? = nil, sendBlocked: String? = nil,
    upload: UploadState? = nil,
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
    self.screen = screen
    self.selection = selection
    self.scrollOffset = scrollOffset
    self.statusMessage = statusMessage
  }

  /// The selected article, if the list is not empty.
  public var selectedArticle: ArticleItem? {
    articles.indices.contains(selection) ? articles[selection] : nil
  }
}
