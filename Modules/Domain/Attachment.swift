/// The references an attachment field holds (decision 2520): a local reference to Courier's
/// private copy of the file while the compound write waits (`courier-local:<attachment id>`),
/// then the server's reference once the file is stored. Pure: which fields of a payload wait for
/// a file, and the payload the record part sends once the files are stored.
package enum Attachment {
  /// What starts a local reference.
  package static let localPrefix = "courier-local:"

  /// The local reference to the private copy kept under `id`.
  /// - Parameter id: the attachment's id (the name of its files in the data folder).
  /// - Returns: the reference a field holds until the file is stored.
  package static func local(_ id: String) -> String { localPrefix + id }

  /// The attachment id a field's value names, when it is a local reference.
  /// - Parameter value: the field's value.
  /// - Returns: the id; nil for the server's reference, or no reference.
  package static func localID(_ value: JSONValue?) -> String? {
    guard let text = value?.stringValue, text.hasPrefix(localPrefix) else { return nil }
    let id = String(text.dropFirst(localPrefix.count))
    return id.isEmpty ? nil : id
  }

  /// The attachment fields of `payload` that hold a local reference, in the order `fields`
  /// names them: the file parts of a compound write, sent before its record.
  /// - Parameters:
  ///   - payload: an outbox operation's payload (nil for a delete).
  ///   - fields: the collection's attachment fields.
  /// - Returns: each waiting field and its attachment id.
  package static func pending(in payload: JSONValue?, fields: [String]) -> [(
    field: String, id: String
  )] {
    fields.compactMap { field in localID(payload?[field]).map { (field, $0) } }
  }

  /// `payload` with the server's references in place of the local ones.
  /// - Parameters:
  ///   - payload: the operation's payload (an object).
  ///   - references: the server's reference of each field's stored file.
  /// - Returns: the payload the record part sends.
  package static func substituting(_ payload: JSONValue, _ references: [String: String])
    -> JSONValue
  {
    guard case .object(var members) = payload else { return payload }
    for (field, reference) in references { members[field] = .string(reference) }
    return .object(members)
  }
}
