#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A file queued for upload in the outbox (`courier upload --queue`, decision 1302): what the
/// replay needs to send the bytes kept in the data folder, carried as the payload of an outbox
/// entry of the `uploads` collection, whose record id is the upload's id (the name of its
/// bytes in the data folder, the same for its whole life, also when a refused upload is queued
/// again under a new operation id).
///
/// Pure: the payload's shape, the choice of protocol and which failures quarantine the entry
/// are table tests (`QueuedUploadTests`).
package struct QueuedUpload: Sendable, Equatable {
  /// The outbox collection of queued uploads.
  package static let collection = "uploads"

  /// Which protocol carries the bytes: tus, one multipart POST, or tus when the endpoint
  /// speaks it.
  package enum Transfer: String, Sendable, Equatable, CaseIterable {
    /// tus 1.0.0 to ``QueuedUpload/tusEndpoint``: an interrupted transfer resumes.
    case tus
    /// One `multipart/form-data` POST to ``QueuedUpload/formTarget``, from byte 0 each time.
    case multipart
    /// tus when ``QueuedUpload/tusEndpoint`` answers `OPTIONS` as a tus server, multipart to
    /// ``QueuedUpload/formTarget`` otherwise.
    case auto
  }

  /// How one send goes, given what is known (``route(started:tusOffered:)``).
  package enum Route: Sendable, Equatable {
    /// tus to this endpoint (its creation URL).
    case tus(String)
    /// A multipart POST to this URL.
    case multipart(String)
    /// Ask this endpoint (`OPTIONS`) whether it speaks tus first.
    case probe(String)
  }

  /// One extra text field (a tus metadata pair, or a form field), in order.
  package struct Field: Sendable, Equatable {
    /// The form field's name, or the tus metadata key (no spaces or commas).
    package var name: String
    /// The text sent, as is (UTF-8; base64 in tus metadata).
    package var value: String

    /// Creates a field.
    /// - Parameters:
    ///   - name: the name.
    ///   - value: the value.
    package init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// Which protocol carries the bytes.
  package var transfer: Transfer
  /// The tus creation URL (absolute), for `tus` and `auto`.
  package var tusEndpoint: String?
  /// The multipart target (absolute), for `multipart` and `auto`.
  package var formTarget: String?
  /// What a tus completion must show to count as delivered.
  package var tusConfirmation: DeliveryProof.UploadConfirmation
  /// What a multipart reply must show to count as delivered.
  package var formConfirmation: DeliveryProof.UploadConfirmation
  /// The `title` (a form field, a tus metadata pair).
  package var title: String
  /// Extra fields, in order, after the title.
  package var fields: [Field]
  /// The name the bytes are sent under (`filename`): the original's, or `NAME.jpg` once
  /// compressed.
  package var filename: String
  /// The media type the bytes are sent as (`filetype`, the file part's `Content-Type`).
  package var contentType: String
  /// The number of bytes kept and sent (the file part's size, the tus `Upload-Length`).
  package var length: Int64
  /// The multipart boundary, chosen once: every attempt sends the same bytes under the same
  /// `Idempotency-Key` (decision 0310).
  package var boundary: String
  /// The original file's path when it was queued, for people (never read again).
  package var source: String
  /// Which file was kept and why (compressed, or the original and why).
  package var verdict: CompressionDecision.Verdict
  /// Whether it may go over an expensive (metered) path although the policy holds large
  /// uploads back there (`courier upload --queue --allow-expensive`,
  /// `allowsExpensiveNetworkAccess`; decision 2610). Kept in the payload only when true.
  package var allowsExpensive = false
  /// The payload member that keeps ``allowsExpensive``.
  package static let allowsExpensiveMember = "allows_expensive"
  /// The IETF draft's interop version its creation speaks (`courier upload --queue --interop
  /// N`, decision 2707); nil for the configuration's when it is sent. Kept in the payload only
  /// when set, as `ietf_interop_version`.
  package var interopVersion: Int?
  /// Whether a tus creation goes without the file's bytes, which follow in `PATCH`es once its
  /// answer named the upload (decision 2515): for a tus server not known to honour
  /// `Idempotency-Key` (another server's, `attachment_upload_url`), where a kill before the
  /// creation's answer would otherwise leave a whole stored file no one names, and a replay
  /// would store a second. Kept in the payload only when true.
  package var bytesAfterCreation = false
  /// The payload member that keeps ``bytesAfterCreation``.
  package static let bytesAfterCreationMember = "bytes_after_creation"

  /// Creates a queued upload's description.
  /// - Parameters:
  ///   - transfer: the protocol.
  ///   - tusEndpoint: the tus creation URL.
  ///   - formTarget: the multipart target.
  ///   - tusConfirmation: what a tus completion must show.
  ///   - formConfirmation: what a multipart reply must show.
  ///   - title: the title.
  ///   - fields: extra fields.
  ///   - filename: the name sent.
  ///   - contentType: the media type sent.
  ///   - length: the bytes kept.
  ///   - boundary: the multipart boundary.
  ///   - source: the original's path.
  ///   - verdict: the compression verdict.
  package init(
    transfer: Transfer, tusEndpoint: String?, formTarget: String?,
    tusConfirmation: DeliveryProof.UploadConfirmation = .status,
    formConfirmation: DeliveryProof.UploadConfirmation = .json, title: String,
    fields: [Field] = [], filename: String, contentType: String, length: Int64,
    boundary: String, source: String, verdict: CompressionDecision.Verdict
  ) {
    self.transfer = transfer
    self.tusEndpoint = tusEndpoint
    self.formTarget = formTarget
    self.tusConfirmation = tusConfirmation
    self.formConfirmation = formConfirmation
    self.title = title
    self.fields = fields
    self.filename = filename
    self.contentType = contentType
    self.length = length
    self.boundary = boundary
    self.source = source
    self.verdict = verdict
  }

  // MARK: - The outbox entry

  /// The operation that queues it: a create of `uploads/<uploadID>` with this payload.
  /// - Parameters:
  ///   - id: the operation id (its `Idempotency-Key`).
  ///   - uploadID: the upload's id, the name of its bytes in the data folder.
  ///   - enqueuedAt: when it was queued.
  /// - Returns: the operation.
  package func operation(id: UUID = UUID(), uploadID: String, enqueuedAt: Date) -> OutboxOperation {
    OutboxOperation(
      id: id, key: RecordKey(collection: Self.collection, id: uploadID), kind: .create,
      payload: payload, baseVersion: nil, enqueuedAt: enqueuedAt)
  }

  /// The entry's payload: every member a string, a number or a list of fields.
  package var payload: JSONValue {
    var members: [String: JSONValue] = [
      "transfer": .string(transfer.rawValue),
      "tus_confirmation": .string(Self.word(tusConfirmation)),
      "form_confirmation": .string(Self.word(formConfirmation)),
      "title": .string(title),
      "fields": .array(
        fields.map { .object(["name": .string($0.name), "value": .string($0.value)]) }),
      "filename": .string(filename), "content_type": .string(contentType),
      "length": .integer(length), "boundary": .string(boundary), "source": .string(source),
      "compression": .object([
        "send": .string(verdict.send.rawValue), "reason": .string(verdict.reason.rawValue),
        "message": .string(verdict.message),
      ]),
    ]
    if let tusEndpoint { members["tus_endpoint"] = .string(tusEndpoint) }
    if allowsExpensive { members[Self.allowsExpensiveMember] = .bool(true) }
    if let interopVersion { members["ietf_interop_version"] = .integer(interopVersion) }
    if bytesAfterCreation { members[Self.bytesAfterCreationMember] = .bool(true) }
    if let formTarget { members["form_target"] = .string(formTarget) }
    return .object(members)
  }

  /// Reads an entry's payload back.
  /// - Parameter payload: the payload, as stored.
  /// - Throws: `CourierError` `localStore` with code `upload_entry_unreadable`, naming the member
  ///   that is missing or of the wrong type, or a transfer that has no target.
  package init(payload: JSONValue?) throws {
    guard let payload, case .object = payload else { throw Self.unreadable("payload") }
    func text(_ key: String) throws -> String {
      guard let value = payload[key]?.stringValue else { throw Self.unreadable(key) }
      return value
    }
    func optionalText(_ key: String) throws -> String? {
      switch payload[key] {
      case nil, .null?: return nil
      case .string(let value)?: return value
      default: throw Self.unreadable(key)
      }
    }
    guard let transfer = Transfer(rawValue: try text("transfer")) else {
      throw Self.unreadable("transfer")
    }
    guard let tus = Self.confirmation(try text("tus_confirmation")) else {
      throw Self.unreadable("tus_confirmation")
    }
    guard let form = Self.confirmation(try text("form_confirmation")) else {
      throw Self.unreadable("form_confirmation")
    }
    guard case .number(let number)? = payload["length"], let length = number.int64Value,
      length >= 0
    else {
      throw Self.unreadable("length")
    }
    guard case .array(let list)? = payload["fields"] else { throw Self.unreadable("fields") }
    let fields = try list.map { item -> Field in
      guard let name = item["name"]?.stringValue, let value = item["value"]?.stringValue else {
        throw Self.unreadable("fields")
      }
      return Field(name: name, value: value)
    }
    let compression = payload["compression"]
    guard let send = compression?["send"]?.stringValue.flatMap(CompressionDecision.Send.init),
      let reason = compression?["reason"]?.stringValue.flatMap(CompressionDecision.Reason.init),
      let message = compression?["message"]?.stringValue
    else { throw Self.unreadable("compression") }
    self.init(
      transfer: transfer, tusEndpoint: try optionalText("tus_endpoint"),
      formTarget: try optionalText("form_target"), tusConfirmation: tus,
      formConfirmation: form, title: try text("title"), fields: fields,
      filename: try text("filename"), contentType: try text("content_type"), length: length,
      boundary: try text("boundary"), source: try text("source"),
      verdict: CompressionDecision.Verdict(send: send, reason: reason, message: message))
    allowsExpensive = payload[Self.allowsExpensiveMember] == .bool(true)
    interopVersion = payload["ietf_interop_version"]?.intValue
    bytesAfterCreation = payload[Self.bytesAfterCreationMember] == .bool(true)
    if transfer != .multipart && tusEndpoint == nil { throw Self.unreadable("tus_endpoint") }
    if transfer != .tus && formTarget == nil { throw Self.unreadable("form_target") }
  }

  // MARK: - Decisions

  /// Which protocol one send uses: the one it was queued with; for `auto`, tus once a tus
  /// upload exists for it (the bytes the server holds are never thrown away), else what the
  /// endpoint's `OPTIONS` said, asked first when not known.
  /// - Parameters:
  ///   - started: whether a tus upload was created for it already (its resume record has an
  ///     upload URL).
  ///   - tusOffered: whether the tus endpoint answered `OPTIONS` as a tus server
  ///     (`Tus.speaks`); nil when not asked yet.
  /// - Returns: the route.
  package func route(started: Bool, tusOffered: Bool?) -> Route {
    switch transfer {
    case .tus:
      return .tus(tusEndpoint ?? "")
    case .multipart:
      return .multipart(formTarget ?? "")
    case .auto:
      let endpoint = tusEndpoint ?? ""
      if started { return .tus(endpoint) }
      switch tusOffered {
      case true?: return .tus(endpoint)
      case false?: return .multipart(formTarget ?? "")
      case nil: return .probe(endpoint)
      }
    }
  }

  /// The error a failed send is recorded with: a local problem that no retry can fix (the kept
  /// bytes are gone or unreadable, the entry cannot be read, the bytes cannot be sent as
  /// described) becomes a refusal (`business`), so the entry is quarantined with its message
  /// instead of stopping every later write forever; the server's answers and transient
  /// failures stay as they are (a hostile offset keeps the entry pending: decision 1301).
  /// - Parameter error: the classified failure.
  /// - Returns: the error to record.
  package static func replayError(_ error: CourierError) -> CourierError {
    var recorded = error
    switch error.kind {
    case .fileUnavailable, .invalidInput:
      recorded.kind = .business
    case .localStore where error.code == unreadableCode:
      recorded.kind = .business
    default:
      break
    }
    return recorded
  }

  /// The code of an entry whose payload cannot be read.
  package static let unreadableCode = "upload_entry_unreadable"

  private static func unreadable(_ member: String) -> CourierError {
    CourierError(
      .localStore, code: unreadableCode,
      serverMessage: "This queued upload's description in the data folder is damaged "
        + "(\(member)); it can't be sent. Discard it and queue the file again.",
      field: member)
  }

  private static func word(_ confirmation: DeliveryProof.UploadConfirmation) -> String {
    switch confirmation {
    case .record: return "record"
    case .json: return "json"
    case .status: return "status"
    }
  }

  private static func confirmation(_ word: String) -> DeliveryProof.UploadConfirmation? {
    switch word {
    case "record": return .record
    case "json": return .json
    case "status": return .status
    default: return nil
    }
  }
}
