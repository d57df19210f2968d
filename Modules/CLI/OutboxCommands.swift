import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier outbox`, `outbox retry` and `outbox discard`: every collection's waiting, refused and
/// conflicted writes and the queued uploads, in the order they are sent.
enum OutboxCommands {
  static func list(context: CommandContext) async throws -> ExitCode {
    let outbox = try context.openOutbox()
    let entries = try outbox.entries()
    let counts = OutboxCounts(entries)
    let path = await outbox.policyPath(checking: counts.pending > 0)
    let waits = OutboxWait.of(entries) { outbox.replayer.pathWait(for: $0, on: path) }
    let now = Date()
    // Queued uploads: the bytes the server confirmed, of the total.
    var uploads: [UUID: QueuedUploadProgress] = [:]
    for upload in (try? context.session.queuedUploads.current()) ?? [] {
      uploads[upload.entry.id] = upload
    }
    if context.global.json {
      context.output.out(
        JSONLine.encode([
          "pending": .int(counts.pending), "rejected": .int(counts.rejected),
          "conflicted": .int(counts.conflicted), "parked": .int(counts.parked),
          "entries": .array(
            zip(entries, waits).map { entry, wait in
              OutboxText.entryObject(
                entry, now: now, upload: uploads[entry.id], wait: wait,
                parts: context.session.queuedUploads.attachmentParts(of: entry))
            }),
        ]) + "\n")
      return .success
    }
    if entries.isEmpty {
      context.output.out("The outbox is empty: every write was sent.\n")
      return .success
    }
    context.output.out(
      "\(counts.pending) pending, \(counts.rejected) refused, \(counts.conflicted) in conflict, "
        + "\(counts.parked) parked:\n")
    for (entry, wait) in zip(entries, waits) {
      context.output.out(
        OutboxText.entryLine(
          entry, now: now, schema: OutboxText.schema(entry, context: context),
          upload: uploads[entry.id], wait: wait,
          parts: context.session.queuedUploads.attachmentParts(of: entry)))
    }
    return .success
  }

  /// `courier outbox retry ID|--all`: refused or conflicted entries back in the queue under a
  /// new key, parked ones under their own, then a replay (unless another courier is syncing:
  /// it will send them).
  static func retry(id: String?, context: CommandContext) async throws -> ExitCode {
    let outbox = try context.openOutbox()
    var retried: [OutboxEntry]
    if let id {
      guard let entry = try findEntry(id, in: outbox) else {
        return unknownEntry(id, context: context)
      }
      retried = entry.state.isPending ? [] : [try outbox.retry(operationID: entry.id)]
    } else {
      retried = try outbox.retryAll()
    }
    let (report, heldBy) = try await SyncCommands.replayIfFree(context, activity: "outbox retry")
    let state = outbox.state
    let keys = Set(retried.map(\.key))
    let refusedAgain = (state.rejected + state.conflicted + state.parked).filter {
      keys.contains($0.key)
    }
    if context.global.json {
      var object = OutboxText.reportObject(report)
      object["retried"] = .array(retried.map { OutboxText.entryObject($0, now: Date()) })
      object["refused_again"] = .array(
        refusedAgain.map { OutboxText.entryObject($0, now: Date()) })
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
          ? "Nothing to retry: no refused, conflicted or parked entry.\n"
          : "Queued again: \(retried.count) entr\(retried.count == 1 ? "y" : "ies").\n"
      )
      if let heldBy {
        context.output.out(
          "Not sent by this command: \(heldBy.description) is syncing this data folder.\n")
      } else {
        context.output.out(OutboxText.reportLine(report))
      }
      OutboxText.show(refusedAgain, after: report, stopped: "not sent yet", context: context)
    }
    if let error = report.stoppedBy, error.kind != .offline, error.kind != .cannotReachHost {
      return ExitCode.forError(error)
    }
    return refusedAgain.isEmpty ? .success : .businessRefusal
  }

  /// `courier outbox discard ID`: drops the entry (and the record's other local changes) and
  /// shows the server's copy again.
  static func discard(id: String, context: CommandContext) async throws -> ExitCode {
    let outbox = try context.openOutbox()
    guard let entry = try findEntry(id, in: outbox) else {
      return unknownEntry(id, context: context)
    }
    let dropped = try outbox.entries().filter { $0.key == entry.key }
    // The upload a queued upload started on the server is cancelled first (decision 2705).
    let cancelled = await context.session.queuedUploads.cancelStarted(entry)
    let after = try outbox.discard(operationID: entry.id).record
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("ok"), "id": .string(entry.key.id),
        "discarded": .array(dropped.map { OutboxText.entryObject($0, now: Date()) }),
        "restored": .bool(after != nil),
      ]
      if let version = after?.version { object["version"] = .int(version) }
      if let cancelled { object["server_upload_cancelled"] = .bool(cancelled) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      if entry.key.collection == QueuedUpload.collection {
        let server =
          switch cancelled {
          case true?: " The part the server had received was cancelled there."
          case false?: " The part the server had received couldn't be cancelled there now."
          case nil: ""
          }
        context.output.out(
          "Discarded the queued upload \(entry.key.id) and its kept bytes.\(server)\n")
        return .success
      }
      context.output.out(
        "Discarded \(dropped.count) local change(s) to \(OutboxText.noun(entry.key)) "
          + "\(entry.key.id); "
          + (after != nil
            ? "the server's copy (v\(after?.version ?? 0)) is shown again.\n"
            : "the server never had it, so it is gone.\n"))
    }
    return .success
  }

  /// An outbox entry by its number (`3`, `#3`) or its operation id.
  static func findEntry(_ id: String, in outbox: SessionOutbox) throws -> OutboxEntry? {
    let trimmed = id.hasPrefix("#") ? String(id.dropFirst()) : id
    if let sequence = Int64(trimmed) {
      return try outbox.entries().first { $0.sequence == sequence }
    }
    guard let uuid = UUID(uuidString: trimmed) else { return nil }
    return try outbox.entries().first { $0.id == uuid }
  }

  static func unknownEntry(_ id: String, context: CommandContext) -> ExitCode {
    context.refuse(
      "No outbox entry is “\(id)”. Run 'courier outbox' to see the entries (their number, or "
        + "their operation_id with --json).", code: "no_such_entry", exit: .businessRefusal)
  }
}
