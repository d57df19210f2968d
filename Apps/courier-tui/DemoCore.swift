// DEMO DATA ONLY, used only with `courier-tui --demo`.
// A scripted, in-memory stand-in for the core so the interface can be tried in a terminal: the
// network goes down and up every 12 seconds, writes made offline wait in a fake outbox and are
// "sent" when it comes back, uploads fake their progress. Nothing touches the network or disk
// (except checking that an upload's path exists).

import CourierDomain
import CourierTUI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

actor DemoCore: TUIActions {
  private var articles: [ArticleItem] = [
    ArticleItem(
      id: "a1", title: "Welcome to Courier (demo data)",
      body: "These articles are demo data: the interface is not wired to the real core yet."),
    ArticleItem(
      id: "a2", title: "Offline-first: the local store is the source of truth",
      body: "The list shows the cache at once, then refreshes from the network."),
    ArticleItem(
      id: "a3", title: "東京の天気 — 週末は晴れ ☀️", body: "CJK and emoji titles are cut by display width."),
    ArticleItem(
      id: "a4", title: "Conflict example", body: "This one was changed on another device.",
      isConflicted: true),
  ]
  private var pending: [String] = []
  private var path: PathStatus = .satisfied
  private var continuation: AsyncStream<TUIUpdate>.Continuation?
  private var nextID = 100

  init() {
    for index in 5...40 {
      articles.append(
        ArticleItem(
          id: "a\(index)", title: "Demo article number \(index)",
          body: "Body of demo article \(index). Scroll with the arrows or PgUp/PgDn."))
    }
  }

  /// The updates stream (one consumer: the event loop).
  func updates() -> AsyncStream<TUIUpdate> {
    let (stream, continuation) = AsyncStream.makeStream(of: TUIUpdate.self)
    self.continuation = continuation
    return stream
  }

  private func send(_ update: TUIUpdate) { continuation?.yield(update) }

  private func publishArticles(source: ArticlesSource = .network) {
    send(.articles(articles, source: source))
    send(.outbox(pending: pending.count, isSyncing: !pending.isEmpty && path == .satisfied))
  }

  /// The scripted demo: cache first, a refresh, then the network flapping every 12 seconds.
  func simulate() async {
    send(.path(path))
    send(
      .issues(
        rejected: [],
        conflicts: [
          SyncIssue(
            articleID: "a4", title: "Edit “Conflict example”",
            message: "This item was changed elsewhere since you last saw it.")
        ]))
    send(.articles(articles, source: .cache(age: .seconds(180))))
    do {
      try await Task.sleep(for: .seconds(1))
      publishArticles()
      while !Task.isCancelled {
        try await Task.sleep(for: .seconds(12))
        path = path == .satisfied ? .unsatisfied : .satisfied
        send(.path(path))
        if path == .satisfied { try await flush() }
      }
    } catch {
      return
    }
  }

  private func flush() async throws {
    guard path == .satisfied else { return }
    while !pending.isEmpty {
      send(.outbox(pending: pending.count, isSyncing: true))
      try await Task.sleep(for: .milliseconds(700))
      guard path == .satisfied else { break }
      let id = pending.removeFirst()
      if let index = articles.firstIndex(where: { $0.id == id }) {
        articles[index].isPending = false
      }
      publishArticles()
    }
    send(.outbox(pending: pending.count, isSyncing: false))
  }

  func refresh() async throws {
    try await Task.sleep(for: .milliseconds(400))
    guard path == .satisfied else {
      send(.refreshFailed(message: "You're offline. Showing the saved copy."))
      send(.articles(articles, source: .cache(age: .seconds(60))))
      return
    }
    send(.refreshFailed(message: nil))
    publishArticles()
    send(.status("Refreshed (demo data)."))
  }

  func syncNow() async throws {
    guard path == .satisfied else {
      throw TUIActionError(message: "You're offline. Your changes are kept and will be sent later.")
    }
    try await flush()
  }

  func addArticle(title: String, body: String) async throws {
    nextID += 1
    let id = "a\(nextID)"
    articles.insert(ArticleItem(id: id, title: title, body: body, isPending: true), at: 0)
    pending.append(id)
    publishArticles()
    send(.status("Added “\(title)”."))
    try await flush()
  }

  func editArticle(id: String, title: String, body: String) async throws {
    guard let index = articles.firstIndex(where: { $0.id == id }) else {
      throw TUIActionError(message: "This item doesn't exist (any more).")
    }
    articles[index].title = title
    articles[index].body = body
    articles[index].isPending = true
    pending.append(id)
    publishArticles()
    try await flush()
  }

  func deleteArticle(id: String) async throws {
    articles.removeAll { $0.id == id }
    pending.append(id)
    publishArticles()
    send(.status("Deleted."))
    try await flush()
  }

  func upload(path typed: String) async throws {
    let path = CoreBridge.expandingTilde(typed)
    let name = URL(fileURLWithPath: path).lastPathComponent
    guard FileManager.default.fileExists(atPath: path) else {
      send(
        .upload(UploadState(fileName: name, phase: .failed(message: "The file couldn't be read."))))
      return
    }
    let total: Int64 = 2_400_000
    send(.upload(UploadState(fileName: name, phase: .compressing)))
    try await Task.sleep(for: .milliseconds(600))
    var sent: Int64 = 0
    while sent < total {
      if self.path != .satisfied {
        send(
          .upload(
            UploadState(
              fileName: name, sent: sent, total: total,
              phase: .retrying(attempt: 1, delay: .seconds(2)))))
        try await Task.sleep(for: .seconds(2))
        continue
      }
      sent = min(total, sent + 120_000)
      send(.upload(UploadState(fileName: name, sent: sent, total: total, phase: .uploading)))
      try await Task.sleep(for: .milliseconds(150))
    }
    send(.upload(UploadState(fileName: name, sent: total, total: total, phase: .succeeded)))
  }
}
