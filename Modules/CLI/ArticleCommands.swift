import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSignals
import Dispatch
import Foundation
import Synchronization

/// `courier articles`, `courier outbox`, `courier sync`: the local store is the source of
/// truth, the sync engine talks to the server.
enum ArticleCommands {
  static func run(_ command: ArticlesCommand, context: CommandContext) async throws -> ExitCode {
    let articles = try openArticles(context)
    switch command {
    case .list(let offline):
      return try await list(offline: offline, articles: articles, context: context)
    case .add(let title, let body):
      let receipt = try await articles.add(title: title, body: body)
      return try await afterWrite(
        "Added", receipt: receipt, articles: articles, context: context, isNew: true)
    case .edit(let id, let title, let body):
      guard var article = try articles.article(id: id)?.value else {
        return notFound(id, context: context)
      }
      if let title { article.title = title }
      if let body { article.body = body }
      let receipt = try await articles.save(article)
      return try await afterWrite("Edited", receipt: receipt, articles: articles, context: context)
    case .delete(let id):
      guard try articles.article(id: id) != nil else { return notFound(id, context: context) }
      let receipt = try await articles.delete(id: id)
      return try await afterWrite(
        "Deleted", receipt: receipt, articles: articles, context: context)
    }
  }

  static func outbox(context: CommandContext) async throws -> ExitCode {
    let entries = try openArticles(context).outbox()
    let counts = OutboxCounts(entries)
    let now = Date()
    // Queued uploads: the bytes the server confirmed, of the total.
    var uploads: [UUID: QueuedUploadProgress] = [:]
    for upload in (try? context.session.queuedUploads()) ?? [] { uploads[upload.entry.id] = upload }
    if context.global.json {
      context.output.out(
        JSONLine.encode([
          "pending": counts.pending, "rejected": counts.rejected,
          "conflicted": counts.conflicted,
          "entries": entries.map { entryObject($0, now: now, upload: uploads[$0.id]) },
        ]) + "\n")
      return .success
    }
    if entries.isEmpty {
      context.output.out("The outbox is empty: every write was sent.\n")
      return .success
    }
    context.output.out(
      "\(counts.pending) pending, \(counts.rejected) refused, \(counts.conflicted) in conflict:\n")
    for entry in entries {
      context.output.out(
        entryLine(
          entry, now: now, schema: schema(entry, context: context), upload: uploads[entry.id]))
    }
    return .success
  }

  /// `courier outbox retry ID|--all`: refused or conflicted entries back in the queue under a
  /// new key, then a replay (unless another courier is syncing: it will send them).
  static func retry(id: String?, context: CommandContext) async throws -> ExitCode {
    let articles = try openArticles(context)
    var retried: [OutboxEntry]
    if let id {
      guard let entry = try findEntry(id, in: articles) else {
        return unknownEntry(id, context: context)
      }
      if entry.state.isPending {
        retried = []
      } else {
        retried = [try await articles.retry(operationID: entry.id)]
      }
    } else {
      retried = try await articles.retryAll()
    }
    let (report, heldBy) = try await replayIfFree(articles, activity: "outbox retry")
    let state = articles.state
    let keys = Set(retried.map(\.key))
    let refusedAgain = (state.rejected + state.conflicted).filter { keys.contains($0.key) }
    if context.global.json {
      var object = reportObject(report)
      object["retried"] = retried.map { entryObject($0, now: Date()) }
      object["refused_again"] = refusedAgain.map { entryObject($0, now: Date()) }
      if let error = report.stoppedBy { object["not_sent"] = CommandContext.failureObject(error) }
      if let heldBy { object["not_sent"] = ["kind": "busy", "message": heldBy.description] }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.out(
        retried.isEmpty
          ? "Nothing to retry: no refused or conflicted entry.\n"
          : "Queued again under a new key: \(retried.count) entr\(retried.count == 1 ? "y" : "ies").\n"
      )
      if let heldBy {
        context.output.out(
          "Not sent by this command: \(heldBy.description) is syncing this data folder.\n")
      } else {
        context.output.out(reportLine(report))
      }
      for entry in refusedAgain {
        context.output.out(
          entryLine(entry, now: Date(), schema: schema(entry, context: context)))
      }
      if let error = report.stoppedBy {
        context.output.err(
          "courier: not sent yet: \(error.userMessage) The \(report.pending) waiting write(s) are "
            + "kept and will be sent by the next sync.\n")
      }
    }
    if let error = report.stoppedBy, error.kind != .offline, error.kind != .cannotReachHost {
      return ExitCode.forError(error)
    }
    return refusedAgain.isEmpty ? .success : .businessRefusal
  }

  /// `courier outbox discard ID`: drops the entry (and the record's other local changes) and
  /// shows the server's copy again.
  static func discard(id: String, context: CommandContext) async throws -> ExitCode {
    let articles = try openArticles(context)
    guard let entry = try findEntry(id, in: articles) else {
      return unknownEntry(id, context: context)
    }
    let dropped = try articles.outbox().filter { $0.key == entry.key }
    let after = try await articles.discard(operationID: entry.id).record
    if context.global.json {
      var object: [String: Any] = [
        "status": "ok", "id": entry.key.id,
        "discarded": dropped.map { entryObject($0, now: Date()) },
        "restored": after != nil,
      ]
      if let version = after?.version { object["version"] = version }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      if entry.key.collection == QueuedUpload.collection {
        context.output.out("Discarded the queued upload \(entry.key.id) and its kept bytes.\n")
        return .success
      }
      context.output.out(
        "Discarded \(dropped.count) local change(s) to \(noun(entry.key)) \(entry.key.id); "
          + (after != nil
            ? "the server's copy (v\(after?.version ?? 0)) is shown again.\n"
            : "the server never had it, so it is gone.\n"))
    }
    return .success
  }

  /// An outbox entry by its number (`3`, `#3`) or its operation id.
  static func findEntry(_ id: String, in articles: Articles) throws -> OutboxEntry? {
    let trimmed = id.hasPrefix("#") ? String(id.dropFirst()) : id
    if let sequence = Int64(trimmed) {
      return try articles.outbox().first { $0.sequence == sequence }
    }
    guard let uuid = UUID(uuidString: trimmed) else { return nil }
    return try articles.outbox().first { $0.id == uuid }
  }

  static func unknownEntry(_ id: String, context: CommandContext) -> ExitCode {
    let message =
      "No outbox entry is “\(id)”. Run 'courier outbox' to see the entries (their number, or "
      + "their operation_id with --json)."
    if context.global.json {
      context.output.out(
        JSONLine.encode([
          "status": "failed", "kind": "invalidInput", "code": "no_such_entry", "message": message,
          "attempts": 0,
        ]) + "\n")
    } else {
      context.output.err("courier: \(message)\n")
    }
    return .businessRefusal
  }

  static func sync(watch: Bool, context: CommandContext) async throws -> ExitCode {
    let articles = try openArticles(context)
    if watch { return await watchLoop(articles: articles, context: context) }
    let report: ReplayReport
    // ISSUE-13: queued uploads show the bar and events of `courier upload` while sent.
    let uploads = QueuedUploadFollower.start(context)
    do {
      report = try await articles.sync()
    } catch {
      await uploads.stop()
      if let busy = error as? SyncInProgressError { return Self.busy(busy, context: context) }
      throw error
    }
    await uploads.stop()
    let state = articles.state
    if context.global.json {
      var object = reportObject(report)
      object["rejected_entries"] = state.rejected.map { entryObject($0, now: Date()) }
      object["conflicted_entries"] = state.conflicted.map { entryObject($0, now: Date()) }
      if let error = report.stoppedBy { object["error"] = CommandContext.failureObject(error) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.out(reportLine(report))
      for entry in state.rejected + state.conflicted {
        context.output.out(
          entryLine(entry, now: Date(), schema: schema(entry, context: context)))
      }
      if let error = report.stoppedBy {
        context.output.err(
          "courier: stopped: \(error.userMessage) The \(report.pending) waiting write(s) are "
            + "kept and will be sent by the next sync.\n")
      }
    }
    if let error = report.stoppedBy { return ExitCode.forError(error) }
    return report.rejected > 0 || report.conflictsKept > 0 ? .businessRefusal : .success
  }

  /// Reports that another process is syncing this data directory: exit 75 (EX_TEMPFAIL).
  static func busy(_ busy: SyncInProgressError, context: CommandContext) -> ExitCode {
    let holder = busy.holder
    let message =
      "\(busy.description); nothing was sent by this one. Try again when it has finished."
    if context.global.json {
      var object: [String: Any] = [
        "status": "failed", "kind": "busy", "code": "sync_in_progress", "message": message,
        "attempts": 0,
      ]
      if let pid = holder.pid { object["holder_pid"] = Int(pid) }
      if let activity = holder.activity { object["holder_activity"] = activity }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.err("courier: \(message)\n")
    }
    return .transient
  }

  /// Replays the outbox unless another process is syncing this data directory (then the
  /// writes stay saved for it, and who it is is returned instead).
  static func replayIfFree(_ articles: Articles, activity: String) async throws -> (
    report: ReplayReport, heldBy: SyncLock.Holder?
  ) {
    do {
      return (try await articles.sync(activity: activity), nil)
    } catch let busy as SyncInProgressError {
      var report = ReplayReport()
      report.pending = articles.state.pendingCount
      return (report, busy.holder)
    }
  }

  // MARK: - Store

  /// The session's articles; warnings (loose permissions tightened) on standard error.
  static func openArticles(_ context: CommandContext) throws -> Articles {
    let output = context.output
    return try context.session.articles(warn: { output.err("courier: warning: \($0)\n") })
  }

  static func notFound(_ id: String, context: CommandContext) -> ExitCode {
    let message =
      "No article has id “\(id)” in the local store. Run 'courier articles list' to refresh it."
    if context.global.json {
      context.output.out(
        JSONLine.encode([
          "status": "failed", "kind": "invalidInput", "code": "not_found", "message": message,
          "attempts": 0,
        ]) + "\n")
    } else {
      context.output.err("courier: \(message)\n")
    }
    return .missingInput
  }

  // MARK: - List

  static func list(offline: Bool, articles: Articles, context: CommandContext)
    async throws -> ExitCode
  {
    let cached = try await articles.cached()
    show(cached, context: context)
    if offline { return .success }
    let fresh = await articles.refresh()
    show(fresh, context: context)
    if let error = fresh.error { return ExitCode.forError(error) }
    return .success
  }

  static func show(_ snapshot: SyncSnapshot<Article>, context: CommandContext) {
    if context.global.json {
      var object: [String: Any] = [
        "source": snapshot.source.rawValue, "stale": snapshot.isStale,
        "articles": snapshot.items.map(articleObject),
      ]
      if let age = snapshot.age { object["age_seconds"] = (age * 1000).rounded() / 1000 }
      if let last = snapshot.lastRefresh { object["last_refresh"] = RFC3339.string(from: last) }
      if !snapshot.deletedIDs.isEmpty { object["deleted_pending"] = snapshot.deletedIDs }
      if !snapshot.unreadable.isEmpty { object["unreadable"] = snapshot.unreadable }
      if snapshot.source == .network { object["not_modified"] = snapshot.notModified }
      if let error = snapshot.error { object["error"] = CommandContext.failureObject(error) }
      context.output.out(JSONLine.encode(object) + "\n")
      return
    }
    switch snapshot.source {
    case .cache:
      let age = snapshot.age.map { "refreshed \(ageText($0)) ago" } ?? "never refreshed"
      context.output.out("Cached (stale, \(age)): \(count(snapshot.items.count))\n")
      context.output.out(articleLines(snapshot.items))
    case .network:
      if let error = snapshot.error {
        context.output.err(
          "courier: could not refresh: \(error.userMessage) The cached list above is kept.\n")
      } else if snapshot.notModified {
        context.output.out("Up to date: the server has no change.\n")
      } else {
        context.output.out("Refreshed: \(count(snapshot.items.count))\n")
        context.output.out(articleLines(snapshot.items))
      }
    }
    if !snapshot.deletedIDs.isEmpty {
      context.output.out(
        "  (\(snapshot.deletedIDs.count) deletion(s) waiting to be sent: "
          + snapshot.deletedIDs.joined(separator: ", ") + ")\n")
    }
    if !snapshot.unreadable.isEmpty {
      context.output.err(
        "courier: \(snapshot.unreadable.count) stored record(s) lack a title or body: "
          + snapshot.unreadable.joined(separator: ", ") + "\n")
    }
  }

  static func count(_ number: Int) -> String { number == 1 ? "1 article" : "\(number) articles" }

  static func ageText(_ seconds: TimeInterval) -> String {
    switch seconds {
    case ..<60: return "\(Int(seconds))s"
    case ..<3600: return "\(Int(seconds / 60))m"
    case ..<86400: return "\(Int(seconds / 3600))h"
    default: return "\(Int(seconds / 86400))d"
    }
  }

  /// Every item's line in one string: one write for the whole list, not one per article.
  static func articleLines(_ items: [SyncItem<Article>]) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(items.count * 80)
    for item in items { appendLine(item, to: &bytes) }
    return String(decoding: bytes, as: UTF8.self)
  }

  static func articleLine(_ item: SyncItem<Article>) -> String {
    var bytes: [UInt8] = []
    appendLine(item, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `  ID  vN  TITLE[  [state, not sent yet]]`, as bytes: string interpolation cost ten times
  /// as much, a fifth of listing 10,000 articles (issue 14).
  static func appendLine(_ item: SyncItem<Article>, to bytes: inout [UInt8]) {
    bytes.append(contentsOf: "  ".utf8)
    bytes.append(contentsOf: item.value.id.utf8)
    if let version = item.value.version {
      bytes.append(contentsOf: "  v".utf8)
      bytes.append(contentsOf: String(version).utf8)
    } else {
      bytes.append(contentsOf: "  new".utf8)
    }
    bytes.append(contentsOf: "  ".utf8)
    bytes.append(contentsOf: item.value.title.utf8)
    if item.state != .synced {
      bytes.append(contentsOf: "  [".utf8)
      bytes.append(contentsOf: item.state.rawValue.utf8)
      bytes.append(contentsOf: ", not sent yet]".utf8)
    }
    bytes.append(UInt8(ascii: "\n"))
  }

  static func articleObject(_ item: SyncItem<Article>) -> [String: Any] {
    var object: [String: Any] = [
      "id": item.value.id, "title": item.value.title, "body": item.value.body,
      "state": item.state.rawValue,
    ]
    if let version = item.value.version { object["version"] = version }
    if let updated = item.value.updatedAt { object["updated_at"] = RFC3339.string(from: updated) }
    return object
  }

  // MARK: - Writes

  /// What a write prints, after a replay when the server may be reachable.
  /// - Parameter isNew: the write created the article (no earlier entry of its key exists).
  static func afterWrite(
    _ verb: String, receipt: WriteReceipt, articles: Articles, context: CommandContext,
    isNew: Bool = false
  ) async throws -> ExitCode {
    let report: ReplayReport
    let heldBy: SyncLock.Holder?
    let pendingCount: Int
    var refused: OutboxEntry?
    var conflicted: OutboxEntry?
    let offline = await context.session.serverIsUnreachable()
    if offline {
      // No usable path: the write is saved; trying would only wait for the failures.
      var unsent = ReplayReport()
      unsent.stoppedBy = CourierError(.offline)
      (report, heldBy) = (unsent, nil)
      if isNew {
        // A new article, nothing sent: no entry of its key can be refused or in conflict, and
        // the store's count is one query where the engine's state reads the whole outbox.
        pendingCount = try articles.pendingCount()
      } else {
        let state = articles.state
        pendingCount = state.pendingCount
        refused = state.rejected.first { $0.key == receipt.key }
        conflicted = state.conflicted.first { $0.key == receipt.key }
      }
    } else {
      (report, heldBy) = try await replayIfFree(
        articles, activity: "articles \(verb.lowercased())")
      let state = articles.state
      pendingCount = state.pendingCount
      refused = state.rejected.first { $0.key == receipt.key }
      conflicted = state.conflicted.first { $0.key == receipt.key }
    }
    // Offline, the record is the receipt's; a replay may have changed it: read again.
    let record = offline ? receipt.record : (try? articles.record(id: receipt.key.id))
    if context.global.json {
      var object: [String: Any] = [
        "status": refused != nil || conflicted != nil ? "refused" : "ok", "id": receipt.key.id,
        "pending": pendingCount, "sent": report.sent,
        "queue": queueWord(receipt.enqueue),
      ]
      if let id = receipt.operationID { object["operation_id"] = id.uuidString.lowercased() }
      if let version = record?.version { object["version"] = version }
      if let state = record?.state { object["state"] = state.rawValue }
      if let error = report.stoppedBy { object["not_sent"] = CommandContext.failureObject(error) }
      if let heldBy {
        object["not_sent"] = [
          "kind": "busy", "code": "sync_in_progress",
          "message": "\(heldBy.description) is syncing this data folder and will send it.",
        ]
      }
      if let refused { object["refused"] = entryObject(refused, now: Date()) }
      if let conflicted { object["conflict"] = entryObject(conflicted, now: Date()) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.out("\(verb) article \(receipt.key.id) locally.\n")
      if let refused {
        context.output.err("courier: the server refused it: \(refusalText(refused.state))\n")
      } else if conflicted != nil {
        context.output.err(
          "courier: it conflicts with a newer version on the server; both are kept "
            + "(see 'courier outbox').\n")
      } else if let error = report.stoppedBy {
        context.output.out(
          "Not sent yet (\(error.userMessage)) It is saved in the outbox and will be sent by "
            + "'courier sync'.\n")
      } else if let heldBy {
        context.output.out(
          "Not sent by this command: \(heldBy.description) is syncing this data folder. It is "
            + "saved in the outbox; that sync or the next one sends it.\n")
      } else if pendingCount == 0 {
        context.output.out("Sent: the server has it.\n")
      }
      if pendingCount > 0 {
        context.output.out("\(pendingCount) write(s) pending.\n")
      }
    }
    return refused != nil || conflicted != nil ? .businessRefusal : .success
  }

  static func queueWord(_ result: EnqueueResult) -> String {
    switch result {
    case .appended: return "appended"
    case .coalesced: return "coalesced"
    case .cancelled: return "cancelled"
    }
  }

  // MARK: - Outbox lines

  static func stateWord(_ state: OutboxEntryState) -> String {
    switch state {
    case .pending: return "pending"
    case .rejected: return "refused"
    case .conflicted: return "conflict"
    }
  }

  static func refusalText(_ state: OutboxEntryState) -> String {
    guard case .rejected(let message, let code) = state else { return "" }
    return code.map { "\(message) (\($0))" } ?? message
  }

  static func entryLine(
    _ entry: OutboxEntry, now: Date, schema: RecordSchema? = nil,
    upload: QueuedUploadProgress? = nil
  ) -> String {
    let operation = entry.operation
    let base = operation.baseVersion.map { " on v\($0)" } ?? ""
    let waited = ageText(max(0, now.timeIntervalSince(operation.enqueuedAt)))
    var line =
      "  #\(entry.sequence)  \(stateWord(entry.state))  \(operation.kind.rawValue) "
      + "\(operation.key)\(base)  (queued \(waited) ago, \(entry.attempts) attempt(s))\n"
    if let upload {
      line +=
        "      upload \(upload.name): \(CompressionDecision.formatBytes(upload.confirmed)) / "
        + "\(CompressionDecision.formatBytes(upload.total)) confirmed (\(upload.percent)%)\n"
    }
    switch entry.state {
    case .pending: break
    case .rejected: line += "      refused: \(refusalText(entry.state))\n"
    case .conflicted(let server):
      // The collection's own names: `rev` for notes, the first text field for the title.
      let schema = schema ?? .standard
      let version = server[schema.versionKey]?.intValue.map { "v\($0)" } ?? "?"
      var title = server["title"]?.stringValue
      if title == nil, case .object(let members) = server {
        let owned = [schema.idKey, schema.versionKey, schema.updatedAtKey]
        title =
          members.keys.sorted().lazy.filter { !owned.contains($0) }
          .compactMap { members[$0]?.stringValue }.first
      }
      line += "      the server has \(version): “\(LogText.escaped(title ?? ""))”\n"
    }
    return line
  }

  /// How a record of an entry's collection is named in a sentence: "article", or "notes record".
  static func noun(_ key: RecordKey) -> String {
    key.collection == Article.collection ? "article" : "\(key.collection) record"
  }

  /// The record schema of an entry's collection, as the session declares it.
  static func schema(_ entry: OutboxEntry, context: CommandContext) -> RecordSchema? {
    context.session.collections.first { $0.name == entry.key.collection }?.schema
  }

  static func entryObject(_ entry: OutboxEntry, now: Date, upload: QueuedUploadProgress? = nil)
    -> [String: Any]
  {
    let operation = entry.operation
    var object: [String: Any] = [
      "sequence": entry.sequence, "operation_id": operation.id.uuidString.lowercased(),
      "kind": operation.kind.rawValue, "collection": operation.key.collection,
      "id": operation.key.id, "state": stateWord(entry.state), "attempts": entry.attempts,
      "enqueued_at": RFC3339.string(from: operation.enqueuedAt),
    ]
    if let upload {
      object["upload"] = [
        "name": upload.name, "bytes_confirmed": upload.confirmed, "bytes_total": upload.total,
        "transfer": upload.upload?.transfer.rawValue ?? "",
      ]
    }
    if let base = operation.baseVersion { object["base_version"] = base }
    switch entry.state {
    case .pending: break
    case .rejected(let message, let code):
      object["message"] = message
      if let code { object["code"] = code }
    case .conflicted(let server):
      if let data = try? JSONEncoder().encode(server),
        let value = try? JSONSerialization.jsonObject(with: data)
      {
        object["server_record"] = value
      }
    }
    return object
  }

  static func reportObject(_ report: ReplayReport) -> [String: Any] {
    [
      "sent": report.sent, "rejected": report.rejected, "conflicts": report.conflicts,
      "conflicts_resent": report.conflictsResent,
      "conflicts_server_kept": report.conflictsTakenFromServer,
      "conflicts_kept": report.conflictsKept, "conflicts_merged": report.conflictsMerged,
      "waiting_for_sender": report.withoutSender, "pending": report.pending,
      "status": report.stoppedBy == nil ? "ok" : "stopped",
    ]
  }

  static func reportLine(_ report: ReplayReport) -> String {
    var line = "Sent \(report.sent), refused \(report.rejected), conflicts \(report.conflicts)"
    if report.conflicts > 0 {
      line +=
        " (\(report.conflictsResent) re-sent, \(report.conflictsMerged) merged, "
        + "\(report.conflictsTakenFromServer) took the server's, \(report.conflictsKept) kept for you)"
    }
    return line + ", pending \(report.pending).\n"
  }

  // MARK: - Watch

  /// What ended a watch.
  enum WatchEnd: Sendable {
    case signal
    case busy(SyncInProgressError)
    case failed(String)
  }

  static func watchLoop(articles: Articles, context: CommandContext) async -> ExitCode {
    let signals = SignalWaiter([SIGINT, SIGTERM])
    let json = context.global.json
    let output = context.output
    let end = await withTaskGroup(of: WatchEnd.self) { group in
      group.addTask {
        do {
          for try await state in articles.watch(activity: "sync --watch") {
            output.out(stateLine(state, json: json))
          }
          return .failed("the watch ended")
        } catch let busy as SyncInProgressError {
          return .busy(busy)
        } catch {
          return .failed("the path monitor stopped: \(error)")
        }
      }
      group.addTask {
        await signals.wait()
        return .signal
      }
      let end = await group.next() ?? .signal
      group.cancelAll()
      signals.cancel()
      return end
    }
    switch end {
    case .signal: return .success
    case .busy(let busy): return Self.busy(busy, context: context)
    case .failed(let message):
      output.err("courier: \(message)\n")
      return .failure
    }
  }

  static func stateLine(_ state: SyncState, json: Bool) -> String {
    if json {
      var object: [String: Any] = [
        "path": state.path.rawValue, "online": state.isOnline, "syncing": state.isSyncing,
        "pending": state.pendingCount, "rejected": state.rejected.count,
        "conflicted": state.conflicted.count,
      ]
      if let error = state.lastError { object["error"] = CommandContext.failureObject(error) }
      return JSONLine.encode(object) + "\n"
    }
    let online = state.isOnline ? "online" : "offline"
    let busy = state.isSyncing ? ", syncing" : ""
    var text =
      "\(online)\(busy): \(state.pendingCount) pending, \(state.rejected.count) refused, "
      + "\(state.conflicted.count) in conflict"
    if let error = state.lastError { text += " (last error: \(error.userMessage))" }
    return text + "\n"
  }
}
