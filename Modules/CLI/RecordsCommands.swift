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

/// `courier records`: the records of a declared collection (the config file's `collections`,
/// or `articles`) as JSON, through the same list, delete and write report as `courier articles`
/// (``CollectionCommands``), plus `show` and fields read as the collection declares them.
enum RecordsCommands {
  static func run(_ command: RecordsCommand, context: CommandContext) async throws -> ExitCode {
    let records: Records<JSONRecord>
    do {
      records = try context.session.collections.records(command.collection, warn: context.warn)
    } catch let error as CourierError where error.code == "unknown_collection" {
      return refuse(error, exit: .usage, context: context)
    }
    let collection = records.collection
    let listing = RecordListing.records(collection.name)
    switch command {
    case .list(_, let offline):
      return try await CollectionCommands.list(
        records, offline: offline, as: listing, context: context)
    case .show(_, let id):
      guard let stored = try records.stored(id: id) else {
        return CollectionCommands.notFound(id, listing, context: context)
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
      return try await CollectionCommands.afterWrite(
        "Added", receipt, in: records, as: listing, isNew: id == nil, context: context)
    case .edit(_, let id, let input, let remove):
      guard let current = try records.record(id: id)?.value else {
        return CollectionCommands.notFound(id, listing, context: context)
      }
      let receipt: WriteReceipt
      do {
        let set = try Self.fields(input, collection: collection, base: current.fields)
        receipt = try await records.change(id: id, set: set, remove: remove)
      } catch let error as CourierError where error.kind == .invalidInput {
        return refuse(error, exit: .usage, context: context)
      }
      return try await CollectionCommands.afterWrite(
        "Edited", receipt, in: records, as: listing, context: context)
    case .delete(_, let id):
      return try await CollectionCommands.delete(
        id: id, in: records, as: listing, context: context)
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
}
