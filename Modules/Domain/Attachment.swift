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

/// Where one file part of a compound write stands (decision 2520), for `courier outbox` and the
/// TUI: queued, on its way (the bytes the server confirmed), or stored under the server's
/// reference.
package struct AttachmentPart: Sendable, Equatable {
  /// The part's state.
  package enum State: String, Sendable, Equatable {
    /// Kept, nothing confirmed yet.
    case queued
    /// The server confirmed some of its bytes.
    case uploading
    /// Stored: the record part sends its reference.
    case stored
  }

  /// The attachment field.
  package var field: String
  /// The attachment's id (its files in the data folder).
  package var id: String
  /// Where it stands.
  package var state: State
  /// The bytes the server confirmed.
  package var confirmed: Int64
  /// The bytes to send.
  package var total: Int64
  /// The server's reference once stored.
  package var reference: String?

  /// Creates a part's state.
  /// - Parameters:
  ///   - field: the field.
  ///   - id: the attachment's id.
  ///   - confirmed: the bytes confirmed.
  ///   - total: the bytes to send.
  ///   - reference: the server's reference, once stored.
  package init(field: String, id: String, confirmed: Int64, total: Int64, reference: String?) {
    self.field = field
    self.id = id
    self.confirmed = reference == nil ? confirmed : total
    self.total = total
    self.reference = reference
    state = reference != nil ? .stored : (confirmed > 0 ? .uploading : .queued)
  }

  /// The share confirmed, 0 to 100, rounded down (100 only when stored or complete).
  package var percent: Int {
    total <= 0 ? (state == .stored ? 100 : 0) : Int(min(100, confirmed * 100 / total))
  }

  /// For people: `photo queued`, `photo uploading 40%`, `photo stored (REF)`.
  package var text: String {
    switch state {
    case .queued: "\(field) queued"
    case .uploading: "\(field) uploading \(percent)%"
    case .stored: "\(field) stored (\(reference ?? ""))"
    }
  }
}
