import CourierDomain
import CourierSystem
import Foundation
import HTTPTypes
import Testing

@Suite("Tus")
struct TusTests {
  static let photo: HTTPFields = [.courierPhotoID: "p1"]

  /// An answer: the response and its body's bytes.
  struct Answer: Sendable {
    let head: HTTPResponse
    let body: Data
  }

  static func answer(_ status: HTTPResponse.Status, _ headers: HTTPFields = [:], body: String = "")
    -> Answer
  {
    var all = headers
    if !body.isEmpty { all[.contentType] = "application/json" }
    return Answer(head: HTTPResponse(status: status, headerFields: all), body: Data(body.utf8))
  }

  static func headers(_ offset: Int64?, _ extra: HTTPFields = [:]) -> HTTPFields {
    var headers = extra
    if let offset { headers[.uploadOffset] = String(offset) }
    return headers
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let response: Answer
    let confirmation: DeliveryProof.UploadConfirmation
    let expected: Expected
    var testDescription: String { name }
  }

  /// The step without the error's details: its kind and code are what a table states.
  enum Expected: Sendable, Equatable {
    case send(Int64)
    case complete(String?)
    case resendChunk
    case resync
    case restart
    case fail(CourierError.Kind, String?)
  }

  static func expected(_ step: Tus.Step) -> Expected {
    switch step {
    case .send(let from): return .send(from)
    case .complete(let id): return .complete(id)
    case .resendChunk: return .resendChunk
    case .resync: return .resync
    case .restart: return .restart
    case .fail(let error): return .fail(error.kind, error.code)
    }
  }

  // A PATCH of 100 bytes from offset 400 of a 1000-byte upload.
  static let patchRows: [Row] = [
    Row(
      name: "204 at from + chunk → send the rest", response: answer(204, headers(500)),
      confirmation: .record, expected: .send(500)),
    Row(
      name: "204 short of the chunk (server took fewer bytes) → send from there",
      response: answer(204, headers(450)), confirmation: .record, expected: .send(450)),
    Row(
      name: "204 beyond what was sent → error, nothing more is sent",
      response: answer(204, headers(501)), confirmation: .record,
      expected: .fail(.invalidResponse, "tus_offset_beyond")),
    Row(
      name: "204 behind what was confirmed → error", response: answer(204, headers(399)),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_offset_behind")),
    Row(
      name: "204 without Upload-Offset (a portal's empty 204) → error",
      response: answer(204), confirmation: .record,
      expected: .fail(.invalidResponse, "tus_offset_missing")),
    Row(
      name: "204 with a non-number offset → error", response: answer(204, [.uploadOffset: "x"]),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_offset_invalid")),
    Row(
      name: "460 checksum mismatch → resend the chunk",
      response: answer(460, headers(400), body: #"{"code":"checksum_mismatch","message":"x"}"#),
      confirmation: .record, expected: .resendChunk),
    Row(
      name: "409 offset_mismatch → HEAD",
      response: answer(409, headers(420), body: #"{"code":"offset_mismatch","message":"x"}"#),
      confirmation: .record, expected: .resync),
    Row(
      name: "409 upload_superseded → HEAD",
      response: answer(409, body: #"{"code":"upload_superseded","message":"x"}"#),
      confirmation: .record, expected: .resync),
    Row(
      name: "404 → start over", response: answer(404, body: #"{"code":"not_found","message":"x"}"#),
      confirmation: .record, expected: .restart),
    Row(
      name: "410 → start over",
      response: answer(410, body: #"{"code":"upload_gone","message":"x"}"#),
      confirmation: .record, expected: .restart),
    Row(
      name: "412 → business error naming the version",
      response: answer(412, body: #"{"code":"tus_version_unsupported","message":"x"}"#),
      confirmation: .record, expected: .fail(.business, "tus_version_unsupported")),
    Row(
      name: "412 without a body (a proxy) → still a clear version error", response: answer(412),
      confirmation: .record, expected: .fail(.business, "tus_version_unsupported")),
    Row(
      name: "503 → transient, retried by the policy (then HEAD)", response: answer(503),
      confirmation: .record, expected: .fail(.overloaded, nil)),
    Row(
      name: "413 → business refusal",
      response: answer(413, body: #"{"code":"upload_too_large","message":"x"}"#),
      confirmation: .record, expected: .fail(.business, "upload_too_large")),
  ]

  @Test("after a PATCH", arguments: patchRows)
  func afterPatch(_ row: Row) {
    let step = Tus.afterPatch(
      row.response.head, body: row.response.body, from: 400, chunk: 100, length: 1000, resends: 0,
      confirmation: row.confirmation)
    #expect(Self.expected(step) == row.expected)
  }

  static let finalRows: [Row] = [
    Row(
      name: "the last byte with the photo's id → complete",
      response: answer(204, headers(1000, photo)), confirmation: .record,
      expected: .complete("p1")),
    Row(
      name: "the last byte without the photo's id, when the record is required → not the server",
      response: answer(204, headers(1000)), confirmation: .record,
      expected: .fail(.notTheServer, "reply_not_upload_record")),
    Row(
      name: "the last byte, any tus server (offset is the proof) → complete",
      response: answer(204, headers(1000)), confirmation: .status, expected: .complete(nil)),
    Row(
      name: "a portal's 200 with no offset is no completion",
      response: answer(200, [.contentType: "text/html"]), confirmation: .status,
      expected: .fail(.invalidResponse, "tus_offset_missing")),
  ]

  @Test("the final PATCH (900 + 100 of 1000)", arguments: finalRows)
  func finalPatch(_ row: Row) {
    let step = Tus.afterPatch(
      row.response.head, body: row.response.body, from: 900, chunk: 100, length: 1000, resends: 0,
      confirmation: row.confirmation)
    #expect(Self.expected(step) == row.expected)
  }

  @Test("a second 460 for the same chunk ends the upload (transient: resumed by the policy)")
  func secondMismatch() {
    let step = Tus.afterPatch(
      Self.answer(460, Self.headers(400)).head, body: Data(), from: 400, chunk: 100, length: 1000,
      resends: 1,
      confirmation: .record)
    #expect(Self.expected(step) == .fail(.connectionLost, "checksum_mismatch"))
  }

  // A HEAD of a 1000-byte upload of which 300 were confirmed before.
  static let headRows: [Row] = [
    Row(
      name: "offset 300 → send from 300", response: answer(200, headers(300)),
      confirmation: .record, expected: .send(300)),
    Row(
      name: "offset 650 (a cut PATCH kept bytes) → send from 650",
      response: answer(200, headers(650)), confirmation: .record, expected: .send(650)),
    Row(
      name: "behind what was confirmed → error", response: answer(200, headers(299)),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_offset_behind")),
    Row(
      name: "beyond the length → error", response: answer(200, headers(1001)),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_offset_beyond")),
    Row(
      name: "missing → error", response: answer(200), confirmation: .record,
      expected: .fail(.invalidResponse, "tus_offset_missing")),
    Row(
      name: "another Upload-Length → error",
      response: answer(200, headers(300, [.uploadLength: "999"])), confirmation: .record,
      expected: .fail(.invalidResponse, "tus_length_mismatch")),
    Row(
      name: "complete with the photo (killed after the last PATCH) → complete",
      response: answer(200, headers(1000, photo)), confirmation: .record,
      expected: .complete("p1")),
    Row(
      name: "404 → start over", response: answer(404), confirmation: .record,
      expected: .restart),
    Row(
      name: "410 → start over", response: answer(410), confirmation: .record,
      expected: .restart),
    Row(
      name: "412 → version error", response: answer(412), confirmation: .record,
      expected: .fail(.business, "tus_version_unsupported")),
  ]

  @Test("after a HEAD", arguments: headRows)
  func afterHead(_ row: Row) {
    let step = Tus.afterHead(
      row.response.head, body: row.response.body, length: 1000, confirmed: 300,
      confirmation: row.confirmation)
    #expect(Self.expected(step) == row.expected)
  }

  struct ConfirmedRow: Sendable, CustomTestStringConvertible {
    let name: String
    let step: Tus.Step
    let exchange: Tus.Exchange
    let expected: Int64
    var testDescription: String { name }
  }

  // 300 confirmed before the answer.
  static let confirmedRows: [ConfirmedRow] = [
    ConfirmedRow(
      name: "a PATCH's offset (never past the bytes sent) is confirmed", step: .send(from: 500),
      exchange: .patch, expected: 500),
    ConfirmedRow(
      name: "a creation's offset (never past its body) is confirmed", step: .send(from: 100),
      exchange: .creation, expected: 100),
    ConfirmedRow(
      name: "a HEAD's offset is only a claim: the confirmed offset stays",
      step: .send(from: 801), exchange: .head, expected: 300),
    ConfirmedRow(
      name: "a HEAD at the confirmed offset changes nothing", step: .send(from: 300),
      exchange: .head, expected: 300),
    ConfirmedRow(
      name: "a step that sends nothing changes nothing", step: .resync, exchange: .patch,
      expected: 300),
    ConfirmedRow(
      name: "a failure changes nothing",
      step: .fail(CourierError(.invalidResponse, code: "tus_offset_beyond")), exchange: .patch,
      expected: 300),
  ]

  @Test("what an answer confirms", arguments: confirmedRows)
  func confirmedOffset(_ row: ConfirmedRow) {
    #expect(Tus.confirmedOffset(after: row.step, of: row.exchange, confirmed: 300) == row.expected)
  }

  @Test("a HEAD claiming a byte too many, refused by a 409, is no loss when the truth follows")
  func headClaimThenTruth() {
    // Confirmed 300; a HEAD claims 801 of 1000, the PATCH from there gets 409, the next HEAD
    // says 800: that is where to go on from, not "lost bytes it had confirmed".
    let claim = Tus.afterHead(
      Self.answer(200, Self.headers(801)).head, body: Data(), length: 1000, confirmed: 300,
      confirmation: .record)
    #expect(claim == .send(from: 801))
    let confirmed = Tus.confirmedOffset(after: claim, of: .head, confirmed: 300)
    let truth = Tus.afterHead(
      Self.answer(200, Self.headers(800)).head, body: Data(), length: 1000, confirmed: confirmed,
      confirmation: .record)
    #expect(truth == .send(from: 800))
  }

  // A creation of a 1000-byte upload that carried the first 100 bytes.
  static let creationRows: [Row] = [
    Row(
      name: "201 with the body stored → send from 100",
      response: answer(201, headers(100, [.location: "http://h/uploads/a"])),
      confirmation: .record, expected: .send(100)),
    Row(
      name: "201 that stored part of the body → send from there",
      response: answer(201, headers(40, [.location: "http://h/uploads/a"])),
      confirmation: .record, expected: .send(40)),
    Row(
      name: "201 claiming more than the body → error",
      response: answer(201, headers(101, [.location: "http://h/uploads/a"])),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_offset_beyond")),
    Row(
      name: "201 without an offset → HEAD",
      response: answer(201, [.location: "http://h/uploads/a"]), confirmation: .record,
      expected: .resync),
    Row(
      name: "201 without Location → error", response: answer(201, headers(100)),
      confirmation: .record, expected: .fail(.invalidResponse, "tus_location_missing")),
    Row(
      name: "460: the upload exists at 0 → send from 0",
      response: answer(460, headers(0, [.location: "http://h/uploads/a"])),
      confirmation: .record, expected: .send(0)),
    Row(
      name: "404 to a creation is no restart, a refusal",
      response: answer(404, body: #"{"code":"not_found","message":"x"}"#),
      confirmation: .record, expected: .fail(.business, "not_found")),
    Row(
      name: "412 → version error", response: answer(412), confirmation: .record,
      expected: .fail(.business, "tus_version_unsupported")),
  ]

  @Test("after a creation", arguments: creationRows)
  func afterCreation(_ row: Row) {
    let step = Tus.afterCreation(
      row.response.head, body: row.response.body, length: 1000, sentBody: 100,
      confirmation: row.confirmation)
    #expect(Self.expected(step) == row.expected)
  }

  @Test("an empty upload is complete at its creation (with the photo)")
  func emptyUpload() {
    let step = Tus.afterCreation(
      Self.answer(201, Self.headers(0, [.location: "/u/1", .courierPhotoID: "p"])).head,
      body: Data(),
      length: 0, sentBody: 0, confirmation: .record)
    #expect(step == .complete(recordID: "p"))
  }

  @Test("capabilities: sha256 only when the checksum extension offers it")
  func capabilities() {
    let reference = Tus.Capabilities(
      options: HTTPResponse(
        status: 204,
        headerFields: [
          .tusVersion: "1.0.0",
          .tusExtension: "creation,creation-with-upload,termination,checksum,expiration",
          .tusChecksumAlgorithm: "sha1,sha256,md5", .tusMaxSize: "4294967296",
        ]))
    #expect(reference.checksumAlgorithm == "sha256")
    #expect(reference.createsWithUpload)
    #expect(reference.maxSize == 4_294_967_296)
    let peer = Tus.Capabilities(
      options: HTTPResponse(
        status: 204,
        headerFields: [.tusVersion: "1.0.0", .tusExtension: "creation,creation-with-upload"]))
    #expect(peer.checksumAlgorithm == nil)
    #expect(Tus.Capabilities(options: HTTPResponse(status: 405)) == .assumed)
    #expect(Tus.Capabilities.assumed.checksumAlgorithm == nil)
    #expect(!Tus.Capabilities.assumed.createsWithUpload)
  }

  @Test("metadata: key base64(value), comma-separated, in order")
  func metadata() {
    #expect(
      Tus.metadata([("title", "Été"), ("filename", "a.jpg"), ("empty", "")])
        == "title w4l0w6k=,filename YS5qcGc=,empty")
  }

  @Test("SHA-256 of known inputs, whole and in pieces")
  func sha256() {
    #expect(
      SHA256.hex(SHA256.hash(Data()))
        == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      SHA256.hex(SHA256.hash(Data("abc".utf8)))
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    let long = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) })
    var pieces = SHA256()
    for start in stride(from: 0, to: long.count, by: 37) {
      pieces.update(long[start..<min(long.count, start + 37)])
    }
    #expect(pieces.finalize() == SHA256.hash(long))
    #expect(
      SHA256.hex(
        SHA256.hash(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
  }

  @Test("a resume record resumes only the same bytes to the same endpoint")
  func resumeIdentity() {
    let record = ResumableUpload(
      endpoint: "http://h/uploads", file: "/a.bin", fileSize: 10, fileModified: 5,
      sha256: "ab", length: 10, idempotencyKey: "k", uploadURL: "http://h/uploads/1",
      confirmedOffset: 4)
    var same = record
    same.idempotencyKey = "other"
    same.uploadURL = nil
    same.confirmedOffset = 0
    #expect(record.resumes(same))
    var touched = same
    touched.fileModified = 6
    #expect(!record.resumes(touched))
    var changed = same
    changed.sha256 = "cd"
    #expect(!record.resumes(changed))
    var elsewhere = same
    elsewhere.endpoint = "http://other/files/"
    #expect(!record.resumes(elsewhere))
    #expect(
      ResumableUpload.storageKey(endpoint: "e", file: "/a")
        != ResumableUpload.storageKey(endpoint: "e", file: "/b"))
  }

  static let speakRows: [(String, Answer, Bool)] = [
    ("204 with Tus-Version 1.0.0", answer(204, [.tusVersion: "1.0.0"]), true),
    ("200 with a list of versions", answer(200, [.tusVersion: "0.2.2, 1.0.0"]), true),
    ("204 with only another version", answer(204, [.tusVersion: "0.2.2"]), false),
    ("204 without Tus-Version (a plain CORS answer)", answer(204, [.allow: "POST"]), false),
    ("405 (a multipart endpoint)", answer(405, [.tusVersion: "1.0.0"]), false),
    ("a login page's 200", answer(200, [.contentType: "text/html"]), false),
  ]

  static let optionsRows: [(String, Answer, Tus.Capabilities?, CourierError.Kind?, String?)] =
    [
      (
        "204 with 1.0.0 and its extensions: what it offers",
        answer(
          204,
          [
            .tusVersion: "1.0.0", .tusExtension: "creation,checksum",
            .tusChecksumAlgorithm: "sha256",
          ]),
        Tus.Capabilities(extensions: ["creation", "checksum"], checksumAlgorithms: ["sha256"]),
        nil, nil
      ),
      (
        "204 with only another version: the version error, before any creation",
        answer(204, [.tusVersion: "0.2.2"]), nil, .business, "tus_version_unsupported"
      ),
      (
        "a portal's login page (200, HTML, no Tus-Version): not the server",
        Answer(
          head: HTTPResponse(status: 200, headerFields: [.contentType: "text/html"]),
          body: Data("<html>Log in to the Wi-Fi</html>".utf8)),
        nil, .notTheServer, "tus_options_not_tus"
      ),
      (
        "a CORS layer's empty 204: assumed (core and creation)",
        answer(204, [.allow: "POST, OPTIONS"]), .assumed, nil, nil
      ),
      (
        "a portal's redirect: not the server",
        answer(302, [.location: "http://portal/login"]), nil, .notTheServer,
        "redirected_elsewhere"
      ),
      (
        "511 network authentication required: not the server", answer(511), nil,
        .notTheServer, "network_login_required"
      ),
      ("405 (a server without OPTIONS): assumed", answer(405), .assumed, nil, nil),
      ("404: assumed, the creation will say", answer(404), .assumed, nil, nil),
      ("501 not implemented: assumed", answer(501), .assumed, nil, nil),
      (
        "401 (a login even for OPTIONS): assumed, the creation is authenticated",
        answer(401, body: #"{"code":"unauthorized"}"#), .assumed, nil, nil
      ),
      ("503: transient, the attempt is retried", answer(503), nil, .overloaded, nil),
      ("502: transient", answer(502), nil, .server, nil),
      ("408: transient", answer(408), nil, .timedOut, nil),
    ]

  @Test("what an OPTIONS answer means for the upload", arguments: optionsRows)
  func afterOptions(
    _ name: String, _ response: Answer, _ offers: Tus.Capabilities?,
    _ kind: CourierError.Kind?, _ code: String?
  ) {
    switch Tus.afterOptions(response.head, body: response.body) {
    case .offers(let capabilities):
      #expect(offers == capabilities, "\(name)")
      #expect(kind == nil, "\(name): expected a failure")
    case .fail(let error):
      #expect(offers == nil, "\(name): expected \(String(describing: offers))")
      #expect(error.kind == kind, "\(name)")
      if let code { #expect(error.code == code, "\(name)") }
    }
  }

  @Test("an OPTIONS answer is a tus server's or not", arguments: speakRows)
  func speaks(_ name: String, _ response: Answer, _ expected: Bool) {
    #expect(Tus.speaks(response.head) == expected, "\(name)")
  }
}
