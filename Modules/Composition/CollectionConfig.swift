import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads the `collections` member of a config file into collection declarations (decision
/// 1203), refusing anything it cannot use with a `ConfigError` that names the file and the key
/// path (`collections.notes.version`):
///
/// ```json
/// "collections": {
///   "notes": {
///     "path": "/notes", "id": "note_id", "version": "rev", "updated_at": "modified_at",
///     "fields": {"text": "string", "tags": "strings"}, "required": ["text"],
///     "lengths": {"text": [1, 10000]},
///     "version_tag": "r", "conflict_codes": ["version_conflict"], "gone_codes": ["not_found"],
///     "write_statuses": [200, 201], "delete_statuses": [204]
///   }
/// }
/// ```
///
/// Every member but the collection's name is optional; the defaults are the backend contract's
/// (`/<name>`, `id`, `version`, `updated_at`, `"v<n>"` tags, open fields). The built-in
/// `articles` take only `{"offline_attachments": true}` (their photos kept offline, decision
/// 2507).
enum CollectionConfig {
  /// The members a collection's object may have.
  static let members = [
    "path", "id", "version", "updated_at", "fields", "required", "lengths", "version_tag",
    "conflict_codes", "gone_codes", "write_statuses", "delete_statuses", "attachments",
    "offline_attachments",
  ]

  /// Names a collection may not take: the built-in ones (articles, and the queued uploads'
  /// outbox collection, decision 1302), and the words `courier records` takes as a subcommand in
  /// the collection's place.
  static let reservedNames: Set<String> = [
    "articles", QueuedUpload.collection, "list", "show", "add", "edit", "delete",
  ]

  /// Reads the declarations.
  /// - Parameters:
  ///   - value: the `collections` member.
  ///   - source: the config file's path, for errors.
  /// - Returns: the declarations, sorted by name.
  /// - Throws: `ConfigError` naming the key path of the first thing wrong.
  static func parse(_ value: JSONValue, source: String) throws -> [CollectionDescription] {
    guard case .object(let collections) = value else {
      throw ConfigError(
        source: source, key: "collections",
        message: "must be an object of collection declarations, by name.")
    }
    return try collections.keys.sorted().map { name in
      try collection(name, collections[name] ?? .null, source: source)
    }
  }

  private static func collection(_ name: String, _ value: JSONValue, source: String) throws
    -> CollectionDescription
  {
    let prefix = "collections.\(ConfigLoader.shown(name))"
    func fail(_ key: String?, _ message: String) -> ConfigError {
      ConfigError(source: source, key: key.map { "\(prefix).\($0)" } ?? prefix, message: message)
    }
    guard isName(name) else {
      throw fail(nil, "a collection's name is 1 to 64 lowercase letters, digits, - or _.")
    }
    // The built-in articles take one member: whether their photos are kept offline.
    if name == CollectionDescription.articles.name, case .object(let object) = value,
      Set(object.keys) == ["offline_attachments"]
    {
      var articles = CollectionDescription.articles
      articles.offlineAttachments = try offline(object, fail: fail)
      return articles
    }
    guard !reservedNames.contains(name) else {
      throw fail(
        nil,
        name == "articles" || name == QueuedUpload.collection
          ? "\(name) are built in; name your collection otherwise."
          : "“\(name)” is a word of `courier records`; name your collection otherwise.")
    }
    guard case .object(let object) = value else {
      throw fail(nil, "must be an object (path, id, version, updated_at, fields…).")
    }
    for key in object.keys.sorted() where !members.contains(key) {
      throw fail(
        ConfigLoader.shown(key), "unknown member (known: \(members.joined(separator: ", "))).")
    }
    func text(_ key: String, default fallback: String) throws -> String {
      guard let member = object[key] else { return fallback }
      guard case .string(let string) = member, !string.isEmpty, string.count <= 200,
        !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
      else { throw fail(key, "must be a non-empty string on one line.") }
      return string
    }
    func strings(_ key: String) throws -> [String]? {
      guard let member = object[key] else { return nil }
      guard case .array(let items) = member else { throw fail(key, "must be a list of strings.") }
      return try items.map { item in
        guard case .string(let string) = item, !string.isEmpty else {
          throw fail(key, "must be a list of non-empty strings.")
        }
        return string
      }
    }
    func statuses(_ key: String, default fallback: Set<Int>) throws -> Set<Int> {
      guard let member = object[key] else { return fallback }
      guard case .array(let items) = member, !items.isEmpty else {
        throw fail(key, "must be a non-empty list of 2xx statuses.")
      }
      return Set(
        try items.map { item in
          guard let status = item.intValue, (200...299).contains(status) else {
            throw fail(key, "must be a non-empty list of 2xx statuses.")
          }
          return status
        })
    }

    let path = try text("path", default: "/\(name)")
    guard path.hasPrefix("/"), !path.hasSuffix("/") || path == "/",
      !path.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace }), path != "/"
    else {
      throw fail("path", "must be a path like /notes (no query, fragment, blank or trailing /).")
    }
    let schema = RecordSchema(
      idKey: try text("id", default: "id"), versionKey: try text("version", default: "version"),
      updatedAtKey: try text("updated_at", default: "updated_at"))
    let owned = [schema.idKey, schema.versionKey, schema.updatedAtKey]
    guard Set(owned).count == 3 else {
      throw fail(nil, "id, version and updated_at must name three different members.")
    }
    var fields: [RecordField] = []
    if let member = object["fields"] {
      guard case .object(let declared) = member else {
        throw fail("fields", "must be an object of field names and kinds.")
      }
      let kinds = RecordField.Kind.allCases.map(\.rawValue).joined(separator: ", ")
      for field in declared.keys.sorted() {
        guard !field.isEmpty, !owned.contains(field) else {
          throw fail(
            "fields", "“\(ConfigLoader.shown(field))” is not a field of the record's own.")
        }
        guard case .string(let kindName)? = declared[field],
          let kind = RecordField.Kind(rawValue: kindName)
        else {
          throw fail("fields.\(ConfigLoader.shown(field))", "must be one of: \(kinds).")
        }
        fields.append(RecordField(field, kind))
      }
    }
    for required in try strings("required") ?? [] {
      guard let index = fields.firstIndex(where: { $0.name == required }) else {
        throw fail(
          "required", "“\(ConfigLoader.shown(required))” is not one of the declared fields.")
      }
      fields[index].required = true
    }
    if let member = object["lengths"] {
      guard case .object(let lengths) = member else {
        throw fail("lengths", "must be an object of string fields and [least, most] lengths.")
      }
      for name in lengths.keys.sorted() {
        let key = "lengths.\(ConfigLoader.shown(name))"
        guard let index = fields.firstIndex(where: { $0.name == name }),
          fields[index].kind == .string
        else { throw fail(key, "is not one of the declared string fields.") }
        guard case .array(let bounds)? = lengths[name], bounds.count == 2,
          let least = bounds[0].intValue, let most = bounds[1].intValue,
          least >= 0, least <= most
        else { throw fail(key, "must be [least, most], two whole numbers, 0 ≤ least ≤ most.") }
        fields[index].length = least...most
      }
    }
    let tag = try object["version_tag"].map { member -> String in
      guard case .string(let prefix) = member, prefix.count <= 16,
        prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
      else {
        throw fail("version_tag", "must be up to 16 letters, digits, - or _ (\"v\" for \"v3\").")
      }
      return prefix
    }
    let contract = ServerAnswers.contract
    let answers = ServerAnswers(
      versionTagPrefix: tag ?? contract.versionTagPrefix,
      writeStatuses: try statuses("write_statuses", default: contract.writeStatuses),
      deleteStatuses: try statuses("delete_statuses", default: contract.deleteStatuses),
      conflictCodes: Set(try strings("conflict_codes") ?? Array(contract.conflictCodes)),
      goneCodes: Set(try strings("gone_codes") ?? Array(contract.goneCodes)))
    // Attachment fields hold a file's reference: a string field (declared so when the
    // collection lists its fields).
    let attachments = try strings("attachments") ?? []
    for field in attachments {
      guard !owned.contains(field), Set(attachments).count == attachments.count else {
        throw fail("attachments", "“\(ConfigLoader.shown(field))” can't be an attachment field.")
      }
      if !fields.isEmpty {
        guard let declared = fields.first(where: { $0.name == field }), declared.kind == .string
        else {
          throw fail(
            "attachments",
            "“\(ConfigLoader.shown(field))” is not one of the declared string fields.")
        }
      }
    }
    var collection = CollectionDescription(
      name: name, path: path, schema: schema, fields: fields, answers: answers,
      attachments: attachments)
    collection.offlineAttachments = try offline(object, fail: fail)
    guard !collection.offlineAttachments || !attachments.isEmpty else {
      throw fail("offline_attachments", "needs attachment fields (\"attachments\").")
    }
    return collection
  }

  /// `offline_attachments`: true or false, false when absent (decision 2507).
  private static func offline(
    _ object: [String: JSONValue], fail: (String?, String) -> ConfigError
  ) throws -> Bool {
    guard let member = object["offline_attachments"] else { return false }
    guard case .bool(let value) = member else {
      throw fail("offline_attachments", "must be true or false.")
    }
    return value
  }

  private static func isName(_ name: String) -> Bool {
    guard (1...64).contains(name.count), let first = name.first, first.isLowercase else {
      return false
    }
    return name.allSatisfy {
      $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_")
    }
  }
}
