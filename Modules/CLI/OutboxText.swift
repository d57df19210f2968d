import CourierCore
import CourierDomain
import CourierLinux
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How `courier outbox`, `courier sync` and the writes print outbox entries and replay reports,
/// as lines for a person and as `--json` objects.
enum OutboxText {
  static func ageText(_ seconds: TimeInterval) -> String {
    switch seconds {
    case ..<60: return "\(Int(seconds))s"
    case ..<3600: return "\(Int(seconds / 60))m"
    case ..<86400: return "\(Int(seconds / 3600))h"
    default: return "\(Int(seconds / 86400))d"
    }
  }

  static func stateWord(_ state: OutboxEntryState) -> String {
    switch state {
    case .pending: return "pending"
    case .rejected: return "refused"
    case .conflicted: return "conflict"
    case .parked: return "parked"
    }
  }

  /// Why an entry waits, for a person (decision 2401); nil when its state line says it.
  static func waitText(_ wait: OutboxWait, sequence: Int64) -> String? {
    switch wait {
    case .next: return "waits for the next sync"
    case .again(let attempts):
      return "sent \(attempts) time(s) without a reply that proved it; the next sync sends it "
        + "again (same key)"
    case .behind(let earlier): return "waits for #\(earlier), an earlier write of this record"
    case .held(let earlier):
      return "held until #\(earlier), an earlier write of this record, is settled"
    case .refused, .conflict: return nil
    case .parked:
      return "'courier outbox retry \(sequence)' sends it again (same key); "
        + "'courier outbox discard \(sequence)' drops it"
    case .path(let wait): return wait.sentence
    }
  }

  static func refusalText(_ state: OutboxEntryState) -> String {
    guard case .rejected(let message, let code) = state else { return "" }
    return code.map { "\(message) (\($0))" } ?? message
  }

  static func entryLine(
    _ entry: OutboxEntry, now: Date, schema: RecordSchema? = nil,
    upload: QueuedUploadProgress? = nil, wait: OutboxWait? = nil, parts: [AttachmentPart] = []
  ) -> String {
    let operation = entry.operation
    let base = operation.baseVersion.map { " on v\($0)" } ?? ""
    let waited = ageText(max(0, now.timeIntervalSince(operation.enqueuedAt)))
    var line =
      "  #\(entry.sequence)  \(stateWord(entry.state))  \(operation.kind.rawValue) "
      + "\(LogText.escaped(operation.key.description))\(base)  "
      + "(queued \(waited) ago, \(entry.attempts) attempt(s))\n"
    if let upload {
      line +=
        "      upload \(LogText.escaped(upload.name)): "
        + "\(CompressionDecision.formatBytes(upload.confirmed)) / "
        + "\(CompressionDecision.formatBytes(upload.total)) confirmed (\(upload.percent)%)\n"
    }
    if !parts.isEmpty {
      let record = entry.state.isPending ? "record pending" : "record \(stateWord(entry.state))"
      line +=
        "      parts: " + parts.map { "file " + LogText.escaped($0.text) }.joined(separator: ", ")
        + ", then " + record + "\n"
    }
    switch entry.state {
    case .pending: break
    case .rejected: line += "      refused: \(LogText.escaped(refusalText(entry.state)))\n"
    case .parked(let reason, let code):
      line +=
        "      parked: \(LogText.escaped(reason))\(code.map { " (\(LogText.escaped($0)))" } ?? "")\n"
    case .conflicted(.null) where operation.kind != .create:
      line += "      the server has no copy: it was deleted there\n"
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
    if let wait, let text = waitText(wait, sequence: entry.sequence) {
      line += "      \(text)\n"
    }
    return line
  }

  /// How a record of an entry's collection is named in a sentence: "article", or "notes record".
  static func noun(_ key: RecordKey) -> String {
    key.collection == Article.collection ? "article" : "\(key.collection) record"
  }

  /// The record schema of an entry's collection, as the session declares it.
  static func schema(_ entry: OutboxEntry, context: CommandContext) -> RecordSchema? {
    context.session.collections.declared.first { $0.name == entry.key.collection }?.schema
  }

  static func entryObject(
    _ entry: OutboxEntry, now: Date, upload: QueuedUploadProgress? = nil,
    wait: OutboxWait? = nil, parts: [AttachmentPart] = []
  ) -> JSONValue {
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
    if !parts.isEmpty {
      object["parts"] = .array(
        parts.map { part in
          var file: [String: JSONValue] = [
            "part": .string("file"), "field": .string(part.field),
            "state": .string(part.state.rawValue), "bytes_confirmed": .int(part.confirmed),
            "bytes_total": .int(part.total),
          ]
          if let reference = part.reference { file["reference"] = .string(reference) }
          return .object(file)
        } + [.object(["part": .string("record"), "state": .string(stateWord(entry.state))])])
    }
    if let base = operation.baseVersion { object["base_version"] = .int(base) }
    switch entry.state {
    case .pending: break
    case .rejected(let message, let code):
      object["message"] = .string(message)
      if let code { object["code"] = .string(code) }
    case .conflicted(let server):
      object["server_record"] = server
      if server == .null, operation.kind != .create { object["server_deleted"] = .bool(true) }
    case .parked(let reason, let code):
      object["message"] = .string(reason)
      if let code { object["code"] = .string(code) }
    }
    if let wait {
      object["waits"] = .string(wait.name)
      if let earlier = wait.waitsFor { object["waits_for"] = .int(earlier) }
      if case .path(let reason) = wait {
        object["waits_on"] = .string(reason.rawValue)
        object["why"] = .string(reason.sentence)
      }
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
      "conflicts_recreated": .int(report.conflictsRecreated),
      "conflicts_gone": .int(report.conflictsGone),
      "conflicts_gone_dropped": .int(report.conflictsGoneDropped), "parked": .int(report.parked),
      "waiting_for_sender": .int(report.withoutSender), "pending": .int(report.pending),
      "status": .string(report.stoppedBy == nil ? "ok" : "stopped"),
    ]
  }

  /// The refused, conflicted and parked entries a replay left, one line each, then why it
  /// stopped (`stopped` names the moment: "stopped", "not sent yet") on standard error.
  static func show(
    _ entries: [OutboxEntry], after report: ReplayReport, stopped: String,
    context: CommandContext
  ) {
    for entry in entries {
      context.output.out(
        entryLine(
          entry, now: Date(), schema: schema(entry, context: context),
          wait: entry.state.isParked ? .parked : nil))
    }
    if let error = report.stoppedBy {
      context.output.err(
        "courier: \(stopped): \(LogText.escaped(error.userMessage)) The \(report.pending) "
          + "waiting write(s) are "
          + "kept and will be sent by the next sync.\n")
    }
  }

  static func reportLine(_ report: ReplayReport) -> String {
    var line = "Sent \(report.sent), refused \(report.rejected), conflicts \(report.conflicts)"
    if report.conflicts > 0 {
      line +=
        " (\(report.conflictsResent) re-sent, \(report.conflictsMerged) merged, "
        + "\(report.conflictsTakenFromServer) took the server's, \(report.conflictsKept) kept for you"
      if report.conflictsGone > 0 {
        line +=
          "; \(report.conflictsGone) against a record deleted on the server: "
          + "\(report.conflictsRecreated) re-created by your edit, "
          + "\(report.conflictsGoneDropped) dropped as the deletion won"
      }
      line += ")"
    }
    if report.parked > 0 { line += ", parked \(report.parked)" }
    return line + ", pending \(report.pending).\n"
  }
}
