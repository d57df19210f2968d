#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A collection of records, as a user declares it (decision 1203): its name in the local store,
/// its path on the server, how its JSON objects carry id, version and update time, the fields
/// its records hold, and what its server's answers mean. Declared once, a collection gets what
/// articles get: stale-while-revalidate reads, the outbox, conflicts and merges. `articles` is
/// one such declaration.
public struct CollectionDescription: Sendable, Equatable {
  /// The collection's name in the local store (`articles`).
  public var name: String
  /// The collection's path on the server (`/articles`); a record is at `<path>/<id>`.
  package var path: String
  /// How the collection's JSON objects carry id, version and update time.
  package var schema: RecordSchema
  /// The fields a record holds besides id, version and update time; empty when the declaration
  /// leaves them open (any field, and a command line's `--field` value is a string).
  package var fields: [RecordField]
  /// What the server's answers mean: the version tag, the statuses that prove a write, the
  /// codes of a conflict and of a record already gone.
  package var answers: ServerAnswers
  /// The fields that name a file (`"attachments"` in the configuration): written with a file,
  /// such a field holds a local reference until the file is stored, then the server's
  /// reference (`Attachment`, decision 2520).
  package var attachments: [String] = []
  /// Whether the files its records' attachment fields name are downloaded after a sync or a
  /// refresh and kept in the response cache for offline reading (`"offline_attachments"`,
  /// decision 2507).
  package var offlineAttachments = false

  /// A collection whose records the server keeps at `path` (`/<name>` by default) as the
  /// reference backend's contract says: `id`, `version` and `updated_at` members, version tags,
  /// and any other fields. (A config file's `collections` declares the other shapes.)
  /// - Parameters:
  ///   - name: the collection's name.
  ///   - path: its path on the server; `/<name>` by default.
  public init(name: String, path: String? = nil) {
    self.init(name: name, path: path, schema: .standard)
  }

  /// Creates a description with the contract's answers and open fields.
  /// - Parameters:
  ///   - name: the collection's name.
  ///   - path: its path on the server; `/<name>` by default.
  ///   - schema: its record schema.
  package init(name: String, path: String? = nil, schema: RecordSchema) {
    self.init(name: name, path: path, schema: schema, fields: [], answers: .contract)
  }

  /// Declares a collection.
  /// - Parameters:
  ///   - name: the collection's name in the local store.
  ///   - path: its path on the server; `/<name>` when nil.
  ///   - schema: how its records carry id, version and update time.
  ///   - fields: the fields its records hold (empty: any).
  ///   - answers: what its server's answers mean.
  ///   - attachments: the fields that name a file.
  package init(
    name: String, path: String?, schema: RecordSchema, fields: [RecordField],
    answers: ServerAnswers, attachments: [String] = []
  ) {
    self.name = name
    self.path = path ?? "/\(name)"
    self.schema = schema
    self.fields = fields
    self.answers = answers
    self.attachments = attachments
  }

  /// The backend contract's articles: `id`, `version`, `updated_at`; a required `title` of 1
  /// to 200 characters (the contract refuses an empty one and a longer one with 422) and a
  /// `body`, both strings; an optional `photo`, an attachment field (the id of a stored photo).
  public static let articles = CollectionDescription(
    name: "articles", path: "/articles", schema: .standard,
    fields: [
      RecordField("title", required: true, length: 1...200), RecordField("body", .string),
      RecordField("photo", .string),
    ],
    answers: .contract, attachments: ["photo"])

  /// The declared field with this name.
  /// - Parameter name: the member's name.
  /// - Returns: the field, or nil when it is not declared.
  package func field(_ name: String) -> RecordField? { fields.first { $0.name == name } }

  /// Checks a record's fields against the declaration: every required field present and not
  /// `null`, every declared one of its kind and within its length, none of the schema's own
  /// members (the server owns them), and, when fields are declared, no other field.
  /// - Parameter payload: the record's fields (a JSON object).
  /// - Throws: `CourierError` of kind `invalidInput` naming the first field that is wrong.
  package func validate(_ payload: JSONValue) throws {
    guard case .object(let members) = payload else {
      throw Self.refusal(nil, "A \(name) record must be a JSON object.")
    }
    for owned in [schema.idKey, schema.versionKey, schema.updatedAtKey]
    where members[owned] != nil {
      throw Self.refusal(owned, "“\(owned)” is set by the server and the record's key, not here.")
    }
    for field in fields {
      guard let value = members[field.name], value != .null else {
        if field.required {
          throw Self.refusal(field.name, "A \(name) record needs the field “\(field.name)”.")
        }
        continue
      }
      if !field.accepts(value) {
        throw Self.refusal(
          field.name, "The field “\(field.name)” of \(name) holds \(field.kind.rawValue) values.")
      }
      if let problem = field.lengthProblem(value) {
        throw Self.refusal(field.name, "The field “\(field.name)” of \(name) \(problem).")
      }
    }
    if !fields.isEmpty {
      for member in members.keys.sorted() where field(member) == nil {
        let known = fields.map(\.name).joined(separator: ", ")
        throw Self.refusal(
          member,
          "\(name) records have no field “\(RecordField.shown(member))” (fields: \(known)).")
      }
    }
  }

  private static func refusal(_ field: String?, _ message: String) -> CourierError {
    CourierError(.invalidInput, code: "invalid_record", serverMessage: message, field: field)
  }
}
