import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSignals
import Dispatch
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
          "pending": .int(counts.pending), "rejected": .int(counts.rejected),
          "conflicted": .int(counts.conflicted),
          "entries": .array(entries.map { entryObject($0, now: now, upload: uploads[$0.id]) }),
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
      object["retried"] = .array(retried.map { entryObject($0, now: Date()) })
      object["refused_again"] = .array(refusedAgain.map { entryObject($0, now: Date()) })
      if let error = report.stoppedBy {
        object["not_sent"] = .object(CommandContext.failureObject(error))
      }
      if let heldBy {
        object["not_sent"] = .object([
          "kind": .string("busy"), "message": .string(heldBy.description),
        ])
      }
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
      var object: [String: JSONValue] = [
        "status": .string("ok"), "id": .string(entry.key.id),
        "discarded": .array(dropped.map { entryObject($0, now: Date()) }),
        "restored": .bool(after != nil),
      ]
      if let version = after?.version { object["version"] = .int(version) }
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
          "status": .string("failed"), "kind": .string("invalidInput"),
          "code": .string("no_such_entry"), "message": .string(message), "attempts": .integer(0),
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
      object["rejected_entries"] = .array(state.rejected.map { entryObject($0, now: Date()) })
      object["conflicted_entries"] = .array(
        state.conflicted.map { entryObject($0, now: Date()) })
      if let error = report.stoppedBy {
        object["error"] = .object(CommandContext.failureObject(error))
      }
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
      var object: [String: JSONValue] = [
        "status": .string("failed"), "kind": .string("busy"), "code": .string("sync_in_progress"),
        "message": .string(message), "attempts": .integer(0),
      ]
      if let pid = holder.pid { object["holder_pid"] = .int(pid) }
      if let activity = holder.activity { object["holder_activity"] = .string(activity) }
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
          "status": .string("failed"), "kind": .string("invalidInput"),
          "code": .string("not_found"), "message": .string(message), "attempts": .integer(0),
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
      let object = CommandContext.snapshotObject(snapshot, items: "articles", articleObject)
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

  static func articleObject(_ item: SyncItem<Article>) -> JSONValue {
    var object: [String: JSONValue] = [
      "id": .string(item.value.id), "title": .string(item.value.title),
      "body": .string(item.value.body), "state": .string(item.state.rawValue),
    ]
    if let version = item.value.version { object["version"] = .int(version) }
    if let updated = item.value.updatedAt {
      object["updated_at"] = .string(RFC3339.string(from: updated))
    }
    return .object(object)
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
      let object = writeObject(
        receipt, record: record, pending: pendingCount, report: report, heldBy: heldBy,
        refused: refused, conflicted: conflicted)
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

  /// `not_sent` when another process holds the sync lock: it will send the write.
  /// A local write's `--json` line (`articles add|edit|delete`, `records put|delete`): what was
  /// written, what the replay after it sent, and what stopped it or came back refused.
  /// - Parameters:
  ///   - receipt: the write's receipt.
  ///   - record: the record as stored after the replay, when there is one.
  ///   - pending: the outbox's pending count after the replay.
  ///   - report: what the replay sent, and what stopped it.
  ///   - heldBy: the process whose sync held the data folder, when this one did not replay.
  ///   - refused: the write's entry, when the server refused it.
  ///   - conflicted: the write's entry, when it conflicts with the server's version.
  /// - Returns: the object.
  static func writeObject(
    _ receipt: WriteReceipt, record: LocalRecord?, pending: Int, report: ReplayReport,
    heldBy: SyncLock.Holder?, refused: OutboxEntry?, conflicted: OutboxEntry?
  ) -> [String: JSONValue] {
    var object: [String: JSONValue] = [
      "status": .string(refused != nil || conflicted != nil ? "refused" : "ok"),
      "id": .string(receipt.key.id), "pending": .int(pending), "sent": .int(report.sent),
      "queue": .string(queueWord(receipt.enqueue)),
    ]
    if let id = receipt.operationID {
      object["operation_id"] = .string(id.uuidString.lowercased())
    }
    if let version = record?.version { object["version"] = .int(version) }
    if let state = record?.state { object["state"] = .string(state.rawValue) }
    if let error = report.stoppedBy {
      object["not_sent"] = .object(CommandContext.failureObject(error))
    }
    if let heldBy { object["not_sent"] = busyObject(heldBy) }
    if let refused { object["refused"] = entryObject(refused, now: Date()) }
    if let conflicted { object["conflict"] = entryObject(conflicted, now: Date()) }
    return object
  }

  static func busyObject(_ heldBy: SyncLock.Holder) -> JSONValue {
    .object([
      "kind": .string("busy"), "code": .string("sync_in_progress"),
      "message": .string("\(heldBy.description) is syncing this data folder and will send it."),
    ])
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
    -> JSONValue
  {
    let operation = entry.operation
    var object: [String: JSONValue] = [
      "sequence": .int(entry.sequence),
      "operation_id": .string(operation.id.uuidString.lowercased()),
      "kind": .string(operation.kind.rawValue), "collection": .string(operation.key.collection),
      "id": .string(operation.key.id), "state": .string(stateWord(entry.state)),
      "attempts": .int(entry.attempts),
      "enqueued_at": .string(RFC3339.string(from: operation.enqueuedAt)),
    ]
    if let upload {
      object["upload"] = .object([
        "name": .string(upload.name), "bytes_confirmed": .int(upload.confirmed),
        "bytes_total": .int(upload.total),
        "transfer": .string(upload.upload?.transfer.rawValue ?? ""),
      ])
    }
    if let base = operation.baseVersion { object["base_version"] = .int(base) }
    switch entry.state {
    case .pending: break
    case .rejected(let message, let code):
      object["message"] = .string(message)
      if let code { object["code"] = .string(code) }
    case .conflicted(let server):
      object["server_record"] = server
    }
    return .object(object)
  }

  static func reportObject(_ report: ReplayReport) -> [String: JSONValue] {
    [
      "sent": .int(report.sent), "rejected": .int(report.rejected),
      "conflicts": .int(report.conflicts), "conflicts_resent": .int(report.conflictsResent),
      "conflicts_server_kept": .int(report.conflictsTakenFromServer),
      "conflicts_kept": .int(report.conflictsKept),
      "conflicts_merged": .int(report.conflictsMerged),
      "waiting_for_sender": .int(report.withoutSender), "pending": .int(report.pending),
      "status": .string(report.stoppedBy == nil ? "ok" : "stopped"),
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
      var object: [String: JSONValue] = [
        "path": .string(state.path.rawValue), "online": .bool(state.isOnline),
        "syncing": .bool(state.isSyncing), "pending": .int(state.pendingCount),
        "rejected": .int(state.rejected.count), "conflicted": .int(state.conflicted.count),
      ]
      if let error = state.lastError {
        object["error"] = .object(CommandContext.failureObject(error))
      }
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
