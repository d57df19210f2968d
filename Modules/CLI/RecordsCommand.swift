/// The `courier records` subcommands, on the records of one declared collection. The collection
/// may come before or after the subcommand: `courier records notes list` is
/// `courier records list notes`.
package enum RecordsCommand: Sendable, Equatable {
  /// `list COLLECTION [--offline]`.
  case list(collection: String, offline: Bool)
  /// `show COLLECTION ID`.
  case show(collection: String, id: String)
  /// `add COLLECTION [--id ID] [--field NAME=VALUE]... [--data JSON]`.
  case add(collection: String, id: String?, fields: RecordFieldsInput)
  /// `edit COLLECTION ID [--field NAME=VALUE]... [--data JSON] [--remove NAME]...`.
  case edit(collection: String, id: String, fields: RecordFieldsInput, remove: [String])
  /// `delete COLLECTION ID`.
  case delete(collection: String, id: String)

  /// The collection the command works on.
  package var collection: String {
    switch self {
    case .list(let collection, _), .show(let collection, _), .add(let collection, _, _),
      .edit(let collection, _, _, _), .delete(let collection, _):
      return collection
    }
  }
}
