import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSystem
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The real core behind the interface: implements `TUIActions` over a `CourierEnvironment` and
/// feeds one `UpdateHub` from the core's state streams (the debounced path, the sync engine's
/// articles, outbox and issues, the uploader's progress). Nothing starts in `init`: `run()`
/// does, in the caller's task, and stops on cancellation.
package final class CoreBridge: TUIActions {
  /// How long a path must hold before the header shows it: short enough that a change shows
  /// within a second without a key (decision record 0650), long enough to skip a blip.
  package static let pathDelays = PathDebounceDelays(
    online: .milliseconds(300), offline: .milliseconds(500))

  private let session: CourierSession
  private let hub: UpdateHub
  private let articles: Articles
  private let outbox: SessionOutbox
  /// Where the articles on screen came from last: a refresh's answer, or the cache.
  private let source = Mutex<ArticlesSource>(.none)

  /// Creates the bridge and opens the local store.
  /// - Parameters:
  ///   - environment: the composition root's adapters.
  ///   - hub: where the updates go.
  ///   - clock: the clock the path delays are measured on.
  ///   - pathDelays: how long a path must hold before it shows.
  /// - Throws: what stops the local store from opening (named file, nothing reset).
  package init(
    environment: CourierEnvironment, hub: UpdateHub,
    clock: any Clock<Duration> = ContinuousClock(), pathDelays: PathDebounceDelays = pathDelays
  ) throws {
    self.hub = hub
    session = CourierSession(environment: environment, pathSmoothing: pathDelays, clock: clock)
    articles = try session.collections.articles()
    outbox = try session.outbox()
  }

  /// The state for the first frame: the cached articles, so they show before any network.
  /// - Returns: the state.
  package func initialState() async -> TUIState {
    var state = TUIState()
    let sync = outbox.state
    state.pendingCount = sync.pendingCount
    state.isSyncing = sync.isSyncing
    (state.rejected, state.conflicts) = Self.issues(sync)
    state.queuedUploads = ((try? session.queuedUploads.current()) ?? []).map(
      QueuedUploadItem.init)
    if let snapshot = try? await articles.cached() {
      let source = Self.source(of: snapshot)
      self.source.withLock { $0 = source }
      state.articles = Self.items(
        snapshot, conflicted: Self.conflictedIDs(sync), part: session.queuedUploads.attachmentPart)
      state.source = source
    }
    return state
  }

  /// Runs the path monitor, the sync engine's replays on reconnection, a first refresh and
  /// one on each reconnection, and forwards every change to the hub until cancelled.
  /// - Throws: what stops a source from starting (the path monitor's socket).
  package func run() async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        var metered = false
        for await path in self.session.paths.updates() {
          self.hub.send(.path(path.status))
          if path.isExpensive != metered {
            metered = path.isExpensive
            self.hub.send(.metered(metered))
          }
        }
      }
      group.addTask {
        // While another process syncs this folder, the path and the articles still show and
        // that process sends the writes; this watch waits and takes over when it ends (2426).
        let hub = self.hub
        let told = Mutex(false)
        let states = self.session.watch(activity: "courier-tui") { holder in
          told.withLock { $0 = true }
          hub.send(.status("Not sending from here while \(holder.description) is syncing."))
        }
        var first = true
        for try await _ in states where first {
          // The first state: the lock is this process's now, and a waiting notice is over.
          first = false
          if told.withLock({ $0 }) { hub.send(.status(nil)) }
        }
      }
      group.addTask {
        var last: SyncState?
        for await state in self.outbox.states() {
          defer { last = state }
          self.hub.send(.outbox(pending: state.pendingCount, isSyncing: state.isSyncing))
          let blocked = state.lastError.map { UserMessages.message(for: $0) }
          if blocked != last?.lastError.map({ UserMessages.message(for: $0) }) {
            self.hub.send(.sendBlocked(message: blocked))
          }
          guard
            state.pendingCount != last?.pendingCount || state.rejected != last?.rejected
              || state.conflicted != last?.conflicted || state.parked != last?.parked
          else { continue }
          let (rejected, conflicts) = Self.issues(state)
          self.hub.send(.issues(rejected: rejected, conflicts: conflicts))
          // The outbox moved: the rows' pending flags did too.
          await self.publishStored()
        }
      }
      group.addTask {
        // The queued uploads: one line each, with the bytes confirmed or being sent.
        for await uploads in self.session.queuedUploads.updates() {
          self.hub.send(.queuedUploads(uploads.map(QueuedUploadItem.init)))
          // A compound write's file moving is tracked the same way: its article's photo state.
          await self.publishStored()
        }
      }
      group.addTask {
        // A first refresh, then one each time the path comes back, so a list shown from the
        // saved copy while offline becomes the server's again without a key.
        try? await self.refresh()
        var previous = self.session.paths.current.status
        for await path in self.session.paths.updates() {
          defer { previous = path.status }
          guard path.status == .satisfied, previous != .satisfied, previous != .unknown else {
            continue
          }
          try? await self.refresh()
        }
      }
      defer { group.cancelAll() }
      while try await group.next() != nil {}
    }
  }

  /// Fetches the articles again; a failure keeps the stored ones on screen, marked as cached.
  /// - Throws: nothing today (the reason of a failure shows under the header).
  package func refresh() async throws {
    let snapshot = await articles.refresh()
    if let error = snapshot.error {
      hub.send(.refreshFailed(message: UserMessages.message(for: error)))
    } else {
      hub.send(.refreshFailed(message: nil))
    }
    let source = Self.source(of: snapshot)
    self.source.withLock { $0 = source }
    hub.send(
      .articles(
        Self.items(
          snapshot, conflicted: Self.conflictedIDs(outbox.state),
          part: session.queuedUploads.attachmentPart,
          kept: session.offlineAttachments.keptCheck()), source: source))
    // Then the photos the articles name, for offline reading, when the config asks (decision
    // 2507): the list shows first; the rows say "photo downloaded" once they are kept.
    guard snapshot.error == nil else { return }
    if !(await session.offlineAttachments.fetch().downloaded.isEmpty) { await publishStored() }
  }

  /// Sends the outbox now.
  /// - Throws: `TUIActionError` when offline or when a transient failure stopped it.
  package func syncNow() async throws {
    guard outbox.state.isOnline else {
      throw TUIActionError(
        message: "You're offline. Your changes are kept and will be sent later.")
    }
    let report: ReplayReport
    do {
      report = try await session.sync(activity: "courier-tui")
    } catch let busy as SyncInProgressError {
      throw TUIActionError(message: "\(busy.holder.description) is syncing; it sends them.")
    }
    if let error = report.stoppedBy { throw error }
  }

  /// Creates an article (shown at once, pending; sent when the path allows).
  /// - Parameters:
  ///   - title: the title.
  ///   - body: the body.
  /// - Throws: what stopped the store from writing it.
  package func addArticle(title: String, body: String) async throws {
    try await articles.add(title: title, body: body)
    await publishStored()
  }

  /// Changes an article.
  /// - Parameters:
  ///   - id: the article.
  ///   - title: the new title.
  ///   - body: the new body.
  /// - Throws: what stopped the store from writing it.
  package func editArticle(id: String, title: String, body: String) async throws {
    try await articles.save(Article(id: id, title: title, body: body))
    await publishStored()
  }

  /// Deletes an article.
  /// - Parameter id: the article.
  /// - Throws: what stopped the store from writing it.
  package func deleteArticle(id: String) async throws {
    try await articles.delete(id: id)
    await publishStored()
  }

  /// A path with a leading `~` or `~user` replaced by that home directory, as a shell (and
  /// `NSString.expandingTildeInPath`) would; any other path as it is.
  /// - Parameter path: a path as a person typed it.
  /// - Returns: the path to open.
  package static func expandingTilde(_ path: String) -> String {
    guard path.hasPrefix("~") else { return path }
    let rest = path.dropFirst()
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    let user = String(rest[..<slash])
    let home =
      user.isEmpty
      ? CourierConfig.home(ProcessInfo.processInfo.environment)
      : PasswordDatabase.home(ofUser: user)
    guard let home, !home.isEmpty else { return path }
    return home + rest[slash...]
  }

  /// Uploads a photo to `/photos` through `CourierSession` (compressed first when it helps),
  /// reporting its states through `TUIUpdate.upload`, progress at most ten times a second.
  /// - Parameter path: the path as typed (`~` is expanded).
  /// - Throws: nothing: a failure shows on the upload line with its message.
  package func upload(path: String) async throws {
    let file = URL(fileURLWithPath: Self.expandingTilde(path))
    let name = file.lastPathComponent
    let throttle = ProgressThrottle(interval: .milliseconds(100))
    var shown = UploadState(fileName: name, phase: .compressing)
    hub.send(.upload(shown))
    func show(_ state: CourierCore.UploadState) {
      guard let next = Self.uploadState(state, after: shown) else { return }
      // Every phase change shows, so the end of an upload is never lost.
      if next.phase != shown.phase { throttle.reset() }
      shown = next
      if throttle.admit(sent: next.sent, total: next.total) { hub.send(.upload(next)) }
    }
    do {
      for try await state in session.uploads.send(file) { show(state) }
    } catch {
      show(.failed(CourierError.wrapping(error)))  // the stream throws the failure
    }
  }

  /// The interface's view of an uploader state; nil for one it does not show.
  /// - Parameters:
  ///   - state: the uploader's state.
  ///   - previous: what is shown now.
  /// - Returns: what to show.
  package static func uploadState(_ state: CourierCore.UploadState, after previous: UploadState)
    -> UploadState?
  {
    var next = previous
    switch state.phase {
    case .compressing:
      next.phase = .compressing
    case .prepared:
      return nil
    case .uploading(let sent, let total):
      next.phase = .uploading
      next.sent = sent
      next.total = total
    case .retrying(let attempt, _, let delay, _):
      next.phase = .retrying(attempt: attempt, delay: delay)
      next.sent = 0
    case .succeeded(let result):
      next.phase = .succeeded
      next.total = max(next.total, result.bodyLength)
      next.sent = next.total
    case .failed(let error):
      if error.kind == .cancelled { return nil }
      next.phase = .failed(message: UserMessages.message(for: error))
    }
    return next
  }

  /// Sends the stored articles again (after a local write or a replay), keeping the source.
  private func publishStored() async {
    guard let snapshot = try? await articles.cached() else { return }
    let source = self.source.withLock { current -> ArticlesSource in
      if case .network = current { return .network }
      current = Self.source(of: snapshot)
      return current
    }
    hub.send(
      .articles(
        Self.items(
          snapshot, conflicted: Self.conflictedIDs(outbox.state),
          part: session.queuedUploads.attachmentPart,
          kept: session.offlineAttachments.keptCheck()), source: source))
  }

  static func source(of snapshot: SyncSnapshot<Article>) -> ArticlesSource {
    if snapshot.source == .network, snapshot.error == nil { return .network }
    guard let age = snapshot.age else { return .none }
    // A stored refresh time far in the past (or a clock gone wrong) must not trap: an age that
    // does not fit is shown as the longest one.
    let milliseconds = (age * 1000).rounded()
    guard milliseconds.isFinite, milliseconds < 9.0e15 else {
      return .cache(age: .seconds(Int64.max / 1000))
    }
    return .cache(age: .milliseconds(Int64(max(0, milliseconds))))
  }

  static func conflictedIDs(_ state: SyncState) -> Set<String> {
    Set(state.conflicted.map(\.key.id))
  }

  /// The rows, newest first; local creations (no server time yet) on top.
  static func items(
    _ snapshot: SyncSnapshot<Article>, conflicted: Set<String>,
    part: (_ field: String, _ id: String) -> AttachmentPart? = { _, _ in nil },
    kept: (_ reference: String) -> Bool = { _ in false }
  ) -> [ArticleItem] {
    snapshot.items
      .sorted {
        let left = $0.value.updatedAt ?? .distantFuture
        let right = $1.value.updatedAt ?? .distantFuture
        return left != right ? left > right : $0.value.id < $1.value.id
      }
      .map {
        ArticleItem(
          id: $0.value.id, title: $0.value.title, body: $0.value.body,
          isPending: $0.state != .synced, isConflicted: conflicted.contains($0.value.id),
          photo: photoState($0.value.photo, part: part, kept: kept))
      }
  }

  /// An article's photo, for its row and detail: `photo queued`, `photo uploading 40%` while
  /// its compound write's file part is on its way (decision 2520), `photo sent` once the
  /// article names the server's photo, `photo downloaded` once a copy is kept for offline
  /// reading (decision 2507).
  /// - Parameters:
  ///   - photo: the article's `photo` reference.
  ///   - part: where a kept file stands, by field and attachment id.
  ///   - kept: whether the server's photo with this reference is kept in the cache.
  /// - Returns: the words; nil without a photo.
  package static func photoState(
    _ photo: String?, part: (_ field: String, _ id: String) -> AttachmentPart?,
    kept: (_ reference: String) -> Bool = { _ in false }
  ) -> String? {
    guard let photo else { return nil }
    guard let id = Attachment.localID(.string(photo)) else {
      return kept(photo) ? "photo downloaded" : "photo sent"
    }
    guard let part = part("photo", id) else { return "photo queued" }
    switch part.state {
    case .queued: return "photo queued"
    case .uploading: return "photo uploading \(part.percent)%"
    case .stored: return "photo stored, article sending"
    }
  }

  /// The refused operations and the conflicts of a sync state, as the interface lists them; a
  /// parked write (decision 2401) is listed with the refused ones, with its reason.
  /// - Parameter state: the sync engine's state.
  /// - Returns: the refused and parked operations (with the reason) and the conflicts.
  package static func issues(_ state: SyncState) -> (rejected: [SyncIssue], conflicts: [SyncIssue])
  {
    let rejected = (state.rejected + state.parked).compactMap { entry -> SyncIssue? in
      switch entry.state {
      case .rejected(let message, _), .parked(let message, _):
        return SyncIssue(articleID: entry.key.id, title: title(of: entry), message: message)
      case .pending, .conflicted:
        return nil
      }
    }
    let conflicts = state.conflicted.map {
      SyncIssue(
        articleID: $0.key.id, title: title(of: $0),
        message: $0.state == .conflicted(serverRecord: .null) && $0.operation.kind != .create
          ? "This item was deleted elsewhere since you last saw it."
          : "This item was changed elsewhere since you last saw it.")
    }
    return (rejected, conflicts)
  }

  /// "Create “Lunch”", from the operation.
  static func title(of entry: OutboxEntry) -> String {
    let verb: String
    switch entry.operation.kind {
    case .create: verb = "Create"
    case .update: verb = "Edit"
    case .delete: verb = "Delete"
    }
    if entry.key.collection == QueuedUpload.collection {
      let upload = try? QueuedUpload(payload: entry.operation.payload)
      return "Upload “\(upload?.filename ?? entry.key.id)”"
    }
    if case .object(let members) = entry.operation.payload,
      case .string(let title) = members["title"]
    {
      return "\(verb) “\(title)”"
    }
    return "\(verb) an article"
  }
}
