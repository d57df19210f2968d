import CourierDomain
import Foundation
import Testing

@Suite("QueuedUpload")
struct QueuedUploadTests {
  static let verdict = CompressionDecision.Verdict(
    send: .compressed, reason: .compressed, message: "beach.png compressed from 9 MB to 1 MB.")

  static func upload(
    _ transfer: QueuedUpload.Transfer, tus: String? = "http://h/uploads",
    form: String? = "http://h/photos", fields: [QueuedUpload.Field] = []
  ) -> QueuedUpload {
    QueuedUpload(
      transfer: transfer, tusEndpoint: tus, formTarget: form, tusConfirmation: .record,
      formConfirmation: .json, title: "Beach “é”", fields: fields, filename: "beach.jpg",
      contentType: "image/jpeg", length: 1_048_576, boundary: "CourierFormBoundaryabc",
      source: "/home/a/beach.png", verdict: verdict)
  }

  static let roundTrips: [QueuedUpload] = [
    upload(.tus, form: nil),
    upload(
      .multipart, tus: nil,
      fields: [.init(name: "album", value: "2026"), .init(name: "x", value: "")]),
    upload(.auto, fields: [.init(name: "album", value: "a,b c")]),
    {
      // `--queue --interop 3` (decision 2707).
      var pinned = upload(.auto)
      pinned.interopVersion = 3
      return pinned
    }(),
  ]

  @Test("the payload reads back as the same upload", arguments: roundTrips)
  func roundTrip(_ upload: QueuedUpload) throws {
    #expect(try QueuedUpload(payload: upload.payload) == upload)
    // Through the bytes a store keeps, too.
    let bytes = try JSONEncoder().encode(upload.payload)
    #expect(
      try QueuedUpload(payload: try JSONDecoder().decode(JSONValue.self, from: bytes)) == upload)
  }

  @Test("the operation is a create of uploads/<id> carrying the payload")
  func operation() {
    let at = Date(timeIntervalSince1970: 1_000)
    let id = UUID()
    let operation = Self.upload(.auto).operation(id: id, uploadID: "u1", enqueuedAt: at)
    #expect(operation.id == id)
    #expect(operation.key == RecordKey(collection: "uploads", id: "u1"))
    #expect(operation.kind == .create)
    #expect(operation.baseVersion == nil)
    #expect(operation.enqueuedAt == at)
    #expect(operation.payload == Self.upload(.auto).payload)
  }

  struct Damage: Sendable, CustomTestStringConvertible {
    let name: String
    let field: String
    let change: @Sendable (inout [String: JSONValue]) -> Void
    var testDescription: String { name }
  }

  static let damages: [Damage] = [
    Damage(name: "no transfer", field: "transfer") { $0["transfer"] = nil },
    Damage(name: "an unknown transfer", field: "transfer") { $0["transfer"] = .string("ftp") },
    Damage(name: "a length that is text", field: "length") { $0["length"] = .string("12") },
    Damage(name: "a negative length", field: "length") { $0["length"] = .integer(-1) },
    Damage(name: "fields not a list", field: "fields") { $0["fields"] = .string("a=b") },
    Damage(name: "a field without value", field: "fields") {
      $0["fields"] = .array([.object(["name": .string("a")])])
    },
    Damage(name: "no compression verdict", field: "compression") { $0["compression"] = nil },
    Damage(name: "an unknown confirmation", field: "tus_confirmation") {
      $0["tus_confirmation"] = .string("maybe")
    },
    Damage(name: "a tus endpoint that is a number", field: "tus_endpoint") {
      $0["tus_endpoint"] = .integer(3)
    },
    Damage(name: "auto without tus endpoint", field: "tus_endpoint") { $0["tus_endpoint"] = nil },
    Damage(name: "auto without form target", field: "form_target") { $0["form_target"] = nil },
    Damage(name: "no boundary", field: "boundary") { $0["boundary"] = nil },
  ]

  @Test("a damaged payload is a clear decoding error naming the member", arguments: damages)
  func damaged(_ damage: Damage) throws {
    guard case .object(var members) = Self.upload(.auto).payload else {
      Issue.record("the payload is not an object")
      return
    }
    damage.change(&members)
    let error = try #require(throws: CourierError.self) {
      _ = try QueuedUpload(payload: .object(members))
    }
    #expect(error.kind == .localStore)
    #expect(error.code == QueuedUpload.unreadableCode)
    #expect(error.field == damage.field)
    #expect(error.userMessage.contains("Discard it"))
  }

  @Test("no payload, or one that is not an object, is unreadable too")
  func notAnObject() {
    for payload in [nil, JSONValue.null, .string("x"), .array([])] {
      #expect(throws: CourierError.self) { _ = try QueuedUpload(payload: payload) }
    }
  }

  struct RouteRow: Sendable, CustomTestStringConvertible {
    let transfer: QueuedUpload.Transfer
    let started: Bool
    let offered: Bool?
    let expected: QueuedUpload.Route
    var testDescription: String {
      "\(transfer) started:\(started) offered:\(offered.map(String.init) ?? "?")"
    }
  }

  static let routes: [RouteRow] = [
    RouteRow(transfer: .tus, started: false, offered: nil, expected: .tus("http://h/uploads")),
    RouteRow(transfer: .tus, started: false, offered: false, expected: .tus("http://h/uploads")),
    RouteRow(
      transfer: .multipart, started: false, offered: true, expected: .multipart("http://h/photos")),
    RouteRow(
      transfer: .multipart, started: true, offered: nil, expected: .multipart("http://h/photos")),
    RouteRow(transfer: .auto, started: false, offered: nil, expected: .probe("http://h/uploads")),
    RouteRow(transfer: .auto, started: false, offered: true, expected: .tus("http://h/uploads")),
    RouteRow(
      transfer: .auto, started: false, offered: false, expected: .multipart("http://h/photos")),
    // Bytes the server already holds are never thrown away for a multipart restart.
    RouteRow(transfer: .auto, started: true, offered: nil, expected: .tus("http://h/uploads")),
    RouteRow(transfer: .auto, started: true, offered: false, expected: .tus("http://h/uploads")),
  ]

  @Test("the route of one send", arguments: routes)
  func route(_ row: RouteRow) {
    #expect(
      Self.upload(row.transfer).route(started: row.started, tusOffered: row.offered) == row.expected
    )
  }

  struct ErrorRow: Sendable, CustomTestStringConvertible {
    let error: CourierError
    let expected: CourierError.Kind
    var testDescription: String { "\(error.kind) \(error.code ?? "-") → \(expected)" }
  }

  static let errors: [ErrorRow] = [
    ErrorRow(
      error: CourierError(.fileUnavailable, code: "upload_bytes_missing"), expected: .business),
    ErrorRow(
      error: CourierError(.invalidInput, code: "upload_target_invalid"), expected: .business),
    ErrorRow(
      error: CourierError(.localStore, code: QueuedUpload.unreadableCode), expected: .business),
    // A reply that could not be decoded is the network's, not the entry's: it stays pending.
    ErrorRow(error: CourierError(.decoding, code: "record_missing_field"), expected: .decoding),
    ErrorRow(
      error: CourierError(.invalidResponse, code: "tus_offset_beyond"), expected: .invalidResponse),
    ErrorRow(error: CourierError(.notTheServer, code: "reply_not_json"), expected: .notTheServer),
    ErrorRow(
      error: CourierError(.business, status: 412, code: "tus_version_unsupported"),
      expected: .business),
    ErrorRow(error: CourierError(.connectionLost), expected: .connectionLost),
    ErrorRow(error: CourierError(.cancelled), expected: .cancelled),
    // The resume record could not be written: the disk, not the entry; it stays pending.
    ErrorRow(
      error: CourierError(.localStore, code: "upload_state_unwritable"), expected: .localStore),
  ]

  @Test("which failures quarantine the entry", arguments: errors)
  func replayError(_ row: ErrorRow) {
    let recorded = QueuedUpload.replayError(row.error)
    #expect(recorded.kind == row.expected)
    #expect(recorded.code == row.error.code)
  }
}
