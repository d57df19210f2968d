import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier records`: the records of a declared collection (the config file's `collections`,
/// or `articles`), through the same outbox, sync lock and replays as articles.
enum RecordsCommands {
  static func run(_ command: RecordsCommand, context: CommandContext) async throws -> ExitCode {
    let records: Records
    do {
      let output = context.output
      records = try context.session.records(
        command.collection, warn: { output.err("courier: warning: \($0)\n") })
    } catch let error as CourierError where error.code == "unknown_collection" {
      return refuse(error, exit: .usage, context: context)
    }
    let collection = records.collection
    switch command {
    case .list(_, let offline):
      let cached = try await records.cached()
      show(cached, collection: collection, context: context)
      if offline { return .success }
      let fresh = await records.refresh()
      show(fresh, collection: collection, context: context)
      if let error = fresh.error { return ExitCode.forError(error) }
      return .success
    case .show(_, let id):
      guard let stored = try records.stored(id: id) else {
        return notFound(id, collection: collection, context: context)
      }
      show(stored, collection: collection, context: context)
      return .success
    case .add(_, let id, let input):
      let fields: [String: JSONValue]
      do {
        fields = try Self.fields(input, collection: collection, base: [:])
      } catch let error as CourierError {
        return refuse(error, exit: .usage, context: context)
      }
      let receipt: WriteReceipt
      do {
        receipt = try await records.add(fields, id: id)
      } catch let error as CourierError where error.kind == .invalidInput {
        return refuse(error, exit: .usage, context: context)
      }
      return try await afterWrite("Added", receipt: receipt, records: records, context: context)
    case .edit(_, let id, let input, let remove):
      guard let current = try records.record(id: id)?.value else {
        return notFound(id, collection: collection, context: context)
      }
      let receipt: WriteReceipt
      do {
        let set = try Self.fields(input, collection: collection, base: current.fields)
        receipt = try await records.change(id: id, set: set, remove: remove)
      } catch let error as CourierError where error.kind == .invalidInput {
        return refuse(error, exit: .usage, context: context)
      }
      return try await afterWrite("Edited", receipt: receipt, records: records, context: context)
    case .delete(_, let id):
      guard try records.record(id: id) != nil else {
        return notFound(id, collection: collection, context: context)
      }
      let receipt = try await records.delete(id: id)
      return try await afterWrite("Deleted", receipt: receipt, records: records, context: context)
    }
  }

  /// The fields a command line gives: `--data` (a JSON object) over `base`, then each
  /// `--field NAME=VALUE` read as the collection declares the field (a string when the
  /// collection leaves its fields open).
  static func fields(
    _ input: RecordFieldsInput, collection: CollectionDescription, base: [String: JSONValue]
  ) throws -> [String: JSONValue] {
    var fields = base
    if let data = input.data {
      guard case .object(let members)? = try? JSONValue(parsing: Data(data.utf8)) else {
        throw CourierError(
          .invalidInput, code: "invalid_data",
          serverMessage: "--data takes the fields as one JSON object, like '{\"text\":\"hi\"}'.")
      }
      fields.merge(members) { $1 }
    }
    for assignment in input.assignments {
      if let field = collection.field(assignment.name) {
        fields[assignment.name] = try field.value(parsing: assignment.value)
      } else if collection.fields.isEmpty {
        fields[assignment.name] = .string(assignment.value)
      } else {
        let known = collection.fields.map(\.name).joined(separator: ", ")
        throw CourierError(
          .invalidInput, code: "invalid_field",
          serverMessage:
            "\(collection.name) records have no field “\(LogText.escaped(assignment.name))” "
            + "(fields: \(known)).", field: assignment.name)
      }
    }
    return fields
  }

  // MARK: - Output

  static func refuse(_ error: CourierError, exit: ExitCode, context: CommandContext) -> ExitCode {
    if context.global.json {
      var object = CommandContext.failureObject(error)
      object["code"] = .string(error.code ?? "invalid_input")
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.err("courier: \(error.userMessage)\n")
    }
    return exit
  }

  static func notFound(_ id: String, collection: CollectionDescription, context: CommandContext)
    -> ExitCode
  {
    let message =
      "No \(collection.name) record has id “\(LogText.escaped(id))” in the local store. Run "
      + "'courier records \(collection.name) list' to refresh it."
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

  static func show(
    _ snapshot: SyncSnapshot<JSONRecord>, collection: CollectionDescription,
    context: CommandContext
  ) {
    let noun = "\(collection.name) record"
    if context.global.json {
      var object = CommandContext.snapshotObject(snapshot, items: "records", recordObject)
      object["collection"] = .string(collection.name)
      context.output.out(JSONLine.encode(object) + "\n")
      return
    }
    let count = snapshot.items.count
    let counted = "\(count) \(noun)\(count == 1 ? "" : "s")"
    var text = ""
    switch snapshot.source {
    case .cache:
      let age =
        snapshot.age.map { "refreshed \(ArticleCommands.ageText($0)) ago" } ?? "never refreshed"
      text += "Cached (stale, \(age)): \(counted)\n"
      for item in snapshot.items { text += line(item) }
    case .network:
      if let error = snapshot.error {
        context.output.err(
          "courier: could not refresh: \(error.userMessage) The cached list above is kept.\n")
      } else if snapshot.notModified {
        text += "Up to date: the server has no change.\n"
      } else {
        text += "Refreshed: \(counted)\n"
        for item in snapshot.items { text += line(item) }
      }
    }
    if !snapshot.deletedIDs.isEmpty {
      text +=
        "  (\(snapshot.deletedIDs.count) deletion(s) waiting to be sent: "
        + snapshot.deletedIDs.joined(separator: ", ") + ")\n"
    }
    context.output.out(text)
    if !snapshot.unreadable.isEmpty {
      context.output.err(
        "courier: \(snapshot.unreadable.count) stored record(s) are not JSON objects: "
          + snapshot.unreadable.joined(separator: ", ") + "\n")
    }
  }

  /// `  ID  v3  {"tags":["a"],"text":"hi"}  [modified, not sent yet]`
  static func line(_ item: SyncItem<JSONRecord>) -> String {
    let version = item.value.version.map { "v\($0)" } ?? "new"
    let marker = item.state == .synced ? "" : "  [\(item.state.rawValue), not sent yet]"
    return "  \(item.value.id)  \(version)  \(JSONValue.object(item.value.fields).jsonText)"
      + "\(marker)\n"
  }

  static func recordObject(_ item: SyncItem<JSONRecord>) -> JSONValue {
    var object: [String: JSONValue] = [
      "id": .string(item.value.id), "fields": .object(item.value.fields),
      "state": .string(item.state.rawValue),
    ]
    if let version = item.value.version { object["version"] = .int(version) }
    if let updated = item.value.updatedAt {
      object["updated_at"] = .string(RFC3339.string(from: updated))
    }
    return .object(object)
  }

  static func show(
    _ record: LocalRecord, collection: CollectionDescription, context: CommandContext
  ) {
    if context.global.json {
      var object: [String: JSONValue] = [
        "collection": .string(collection.name), "id": .string(record.key.id),
        "state": .string(record.state.rawValue), "deleted": .bool(record.isDeleted),
      ]
      if let payload = record.payload { object["fields"] = payload }
      if let version = record.version { object["version"] = .int(version) }
      if let updated = record.updatedAt {
        object["updated_at"] = .string(RFC3339.string(from: updated))
      }
      if let server = record.server, record.state != .synced {
        object["server_fields"] = server.payload
      }
      context.output.out(JSONLine.encode(object) + "\n")
      return
    }
    let version = record.version.map { "v\($0)" } ?? "never sent"
    var text = "\(collection.name)/\(record.key.id)  \(version)  (\(record.state.rawValue))\n"
    if case .object(let fields)? = record.payload {
      for name in fields.keys.sorted() {
        text += "  \(name): \(fields[name].map { $0.jsonText } ?? "null")\n"
      }
    } else if record.isDeleted {
      text += "  (deleted here; the deletion is not sent yet)\n"
    }
    context.output.out(text)
  }

  // MARK: - Writes

  static func afterWrite(
    _ verb: String, receipt: WriteReceipt, records: Records, context: CommandContext
  ) async throws -> ExitCode {
    let report: ReplayReport
    let heldBy: SyncLock.Holder?
    if await context.session.serverIsUnreachable() {
      var offline = ReplayReport()
      offline.pending = records.state.pendingCount
      offline.stoppedBy = CourierError(.offline)
      (report, heldBy) = (offline, nil)
    } else {
      do {
        (report, heldBy) = (try await records.sync(activity: "records \(verb.lowercased())"), nil)
      } catch let busy as SyncInProgressError {
        var waiting = ReplayReport()
        waiting.pending = records.state.pendingCount
        (report, heldBy) = (waiting, busy.holder)
      }
    }
    let state = records.state
    let refused = state.rejected.first { $0.key == receipt.key }
    let conflicted = state.conflicted.first { $0.key == receipt.key }
    let record = try? records.stored(id: receipt.key.id)
    let name = records.collection.name
    if context.global.json {
      var object = ArticleCommands.writeObject(
        receipt, record: record, pending: state.pendingCount, report: report, heldBy: heldBy,
        refused: refused, conflicted: conflicted)
      object["collection"] = .string(name)
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      var text = "\(verb) \(name) record \(receipt.key.id) locally.\n"
      if let refused {
        context.output.err(
          "courier: the server refused it: \(ArticleCommands.refusalText(refused.state))\n")
      } else if conflicted != nil {
        context.output.err(
          "courier: it conflicts with a newer version on the server; both are kept "
            + "(see 'courier outbox').\n")
      } else if let error = report.stoppedBy {
        text +=
          "Not sent yet (\(error.userMessage)) It is saved in the outbox and will be sent by "
          + "'courier sync'.\n"
      } else if let heldBy {
        text +=
          "Not sent by this command: \(heldBy.description) is syncing this data folder. It is "
          + "saved in the outbox; that sync or the next one sends it.\n"
      } else if state.pendingCount == 0 {
        text += "Sent: the server has it.\n"
      }
      if state.pendingCount > 0 { text += "\(state.pendingCount) write(s) pending.\n" }
      context.output.out(text)
    }
    return refused != nil || conflicted != nil ? .businessRefusal : .success
  }
}
