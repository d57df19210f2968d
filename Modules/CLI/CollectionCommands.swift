import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What `courier articles` and `courier records` do alike, for the records of any collection:
/// list the cache then refresh it, delete, and report a write with the replay after it. Each
/// command adds only how its records are written and named (``RecordListing``).
enum CollectionCommands {
  // MARK: - List

  /// The cached records, then (unless `offline`) the refreshed ones; a failed refresh exits
  /// with its error's code, the cache shown.
  static func list<Record: ListedRecord>(
    _ records: Records<Record>, offline: Bool, as listing: RecordListing,
    context: CommandContext
  ) async throws -> ExitCode {
    show(try await records.cached(), as: listing, context: context)
    if offline { return .success }
    let fresh = await records.refresh()
    show(fresh, as: listing, context: context)
    if let error = fresh.error { return ExitCode.forError(error) }
    // The files the records name, for offline reading, where a collection asks (decision 2507).
    for (url, reason) in await context.session.offlineAttachments.fetch().failed.sorted(by: <) {
      context.output.err(
        "courier: warning: \(LogText.escaped(url)) is not kept offline: "
          + "\(LogText.escaped(reason))\n")
    }
    return .success
  }

  static func show<Record: ListedRecord>(
    _ snapshot: SyncSnapshot<Record>, as listing: RecordListing, context: CommandContext
  ) {
    if context.global.json {
      var object = CommandContext.snapshotObject(snapshot, items: listing.itemsKey, \.jsonObject)
      if let collection = listing.collection { object["collection"] = .string(collection) }
      context.output.out(JSONLine.encode(object) + "\n")
      return
    }
    // Every line in one write, not one per record.
    var bytes: [UInt8] = []
    func counted(_ heading: String) {
      bytes.append(contentsOf: "\(heading): \(listing.count(snapshot.items.count))\n".utf8)
      bytes.reserveCapacity(bytes.count + snapshot.items.count * 80)
      for item in snapshot.items { item.appendLine(to: &bytes) }
    }
    switch snapshot.source {
    case .cache:
      let age = snapshot.age.map { "refreshed \(OutboxText.ageText($0)) ago" } ?? "never refreshed"
      counted("Cached (stale, \(age))")
    case .network:
      if let error = snapshot.error, error.code == "record_too_deep" {
        // The other records were refreshed; the one refused is kept as it was (decision 2428).
        counted("Refreshed")
        context.output.err("courier: \(LogText.escaped(error.userMessage))\n")
      } else if let error = snapshot.error {
        context.output.err(
          "courier: could not refresh: \(LogText.escaped(error.userMessage)) The cached list "
            + "above is kept.\n")
      } else if snapshot.notModified {
        bytes.append(contentsOf: "Up to date: the server has no change.\n".utf8)
      } else {
        counted("Refreshed")
      }
    }
    if !snapshot.deletedIDs.isEmpty {
      let ids = LogText.escaped(snapshot.deletedIDs.joined(separator: ", "))
      bytes.append(
        contentsOf: "  (\(snapshot.deletedIDs.count) deletion(s) waiting to be sent: \(ids))\n".utf8
      )
    }
    if !bytes.isEmpty { context.output.out(String(decoding: bytes, as: UTF8.self)) }
    if !snapshot.unreadable.isEmpty {
      context.output.err(
        "courier: \(snapshot.unreadable.count) stored record(s) \(listing.unreadable): "
          + LogText.escaped(snapshot.unreadable.joined(separator: ", ")) + "\n")
    }
  }

  // MARK: - Writes

  /// `delete ID`: the deletion saved and queued, then as every write.
  static func delete<Record: ListedRecord>(
    id: String, in records: Records<Record>, as listing: RecordListing, context: CommandContext
  ) async throws -> ExitCode {
    guard try records.record(id: id) != nil else { return notFound(id, listing, context: context) }
    let receipt = try await records.delete(id: id)
    return try await afterWrite("Deleted", receipt, in: records, as: listing, context: context)
  }

  static func notFound(_ id: String, _ listing: RecordListing, context: CommandContext)
    -> ExitCode
  {
    context.refuse(
      "No \(listing.noun) has id “\(LogText.escaped(id))” in the local store. Run "
        + "'\(listing.listCommand)' to refresh it.", code: "not_found", exit: .missingInput)
  }

  /// What a write prints, after a replay when the server may be reachable.
  /// - Parameter isNew: the write made a record with a new id (no earlier entry of its key
  ///   can be refused or in conflict).
  static func afterWrite<Record: ListedRecord>(
    _ verb: String, _ receipt: WriteReceipt, in records: Records<Record>,
    as listing: RecordListing, isNew: Bool = false, context: CommandContext
  ) async throws -> ExitCode {
    let outbox = try context.openOutbox()
    var report = ReplayReport()
    var heldBy: SyncLock.Holder?
    let offline = await context.session.paths.serverIsUnreachable()
    if offline {
      // No usable path: the write is saved; trying would only wait for the failures.
      report.stoppedBy = CourierError(.offline)
    } else {
      (report, heldBy) = try await SyncCommands.replayIfFree(
        context, activity: "\(listing.itemsKey) \(verb.lowercased())")
    }
    // A new record, offline: nothing of its key can be refused or in conflict, and the store's
    // count is one query where the outbox's state reads the whole outbox.
    let state = offline && isNew ? nil : outbox.state
    let pending = try state?.pendingCount ?? outbox.pendingCount()
    let refused = state?.rejected.first { $0.key == receipt.key }
    let conflicted = state?.conflicted.first { $0.key == receipt.key }
    // Offline, the record is the receipt's; a replay may have changed it: read again.
    let record = offline ? receipt.record : (try? records.stored(id: receipt.key.id))
    let written = WriteReport(
      receipt: receipt, record: record, pending: pending, report: report, heldBy: heldBy,
      refused: refused, conflicted: conflicted)
    if context.global.json {
      var object = written.object
      if let collection = listing.collection { object["collection"] = .string(collection) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      written.show("\(verb) \(listing.noun) \(receipt.key.id) locally.\n", context: context)
    }
    return refused != nil || conflicted != nil ? .businessRefusal : .success
  }
}
