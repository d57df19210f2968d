import CourierCore
import CourierDomain
import CourierLinux
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a local write of `courier articles` or `courier records` tells: what was written, what
/// the replay after it sent, and what stopped it or came back refused.
struct WriteReport {
  /// The write's receipt.
  let receipt: WriteReceipt
  /// The record as stored after the replay, when there is one.
  let record: LocalRecord?
  /// The outbox's pending count after the replay.
  let pending: Int
  /// What the replay sent, and what stopped it.
  let report: ReplayReport
  /// The process whose sync held the data folder, when this one did not replay.
  let heldBy: SyncLock.Holder?
  /// The write's entry, when the server refused it.
  let refused: OutboxEntry?
  /// The write's entry, when it conflicts with the server's version.
  let conflicted: OutboxEntry?

  /// Whether the server's version replaced this write: the replay met a conflict and took the
  /// server's record (`serverWins`), and the record it left is synced but not what was written.
  /// Such a write was not sent, whatever `sent` counts (decision 2422).
  var replacedByServer: Bool {
    guard report.conflictsTakenFromServer > 0, refused == nil, conflicted == nil,
      let record, record.state == .synced
    else { return false }
    return record.payload != receipt.record?.payload
  }

  /// What a person is told when the server's version replaced the write.
  var replacedText: String {
    let version = record?.version.map { " (v\($0))" } ?? ""
    return "Not sent: the server had a newer version\(version), and the conflict policy "
      + "(serverWins) kept it; this change was dropped."
  }

  /// The `--json` line's object.
  var object: [String: JSONValue] {
    let status =
      refused != nil || conflicted != nil ? "refused" : replacedByServer ? "dropped" : "ok"
    var object: [String: JSONValue] = [
      "status": .string(status),
      "id": .string(receipt.key.id), "pending": .int(pending), "sent": .int(report.sent),
      "queue": .string(Self.queueWord(receipt.enqueue)),
    ]
    if let id = receipt.operationID {
      object["operation_id"] = .string(id.uuidString.lowercased())
    }
    if let version = record?.version { object["version"] = .int(version) }
    if let state = record?.state { object["state"] = .string(state.rawValue) }
    if let error = report.stoppedBy {
      object["not_sent"] = .object(CommandContext.failureObject(error))
    }
    // `not_sent` when another process holds the sync lock: it will send the write.
    if let heldBy { object["not_sent"] = Self.busyObject(heldBy) }
    if let refused { object["refused"] = OutboxText.entryObject(refused, now: Date()) }
    if let conflicted { object["conflict"] = OutboxText.entryObject(conflicted, now: Date()) }
    if replacedByServer {
      object["dropped"] = .object([
        "reason": .string("server_wins"), "message": .string(replacedText),
      ])
    }
    return object
  }

  /// Prints the write for a person: `written`, then whether it was sent and what is pending.
  func show(_ written: String, context: CommandContext) {
    context.output.out(written)
    if let refused {
      context.output.err(
        "courier: the server refused it: "
          + "\(LogText.escaped(OutboxText.refusalText(refused.state)))\n")
    } else if conflicted != nil {
      context.output.err(
        "courier: it conflicts with a newer version on the server; both are kept "
          + "(see 'courier outbox').\n")
    } else if replacedByServer {
      context.output.out(replacedText + "\n")
    } else if let error = report.stoppedBy {
      context.output.out(
        "Not sent yet (\(LogText.escaped(error.userMessage))) It is saved in the outbox and will "
          + "be sent by 'courier sync'.\n")
    } else if let heldBy {
      context.output.out(
        "Not sent by this command: \(heldBy.description) is syncing this data folder. It is "
          + "saved in the outbox; that sync or the next one sends it.\n")
    } else if pending == 0 {
      context.output.out("Sent: the server has it.\n")
    }
    if pending > 0 { context.output.out("\(pending) write(s) pending.\n") }
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
}
