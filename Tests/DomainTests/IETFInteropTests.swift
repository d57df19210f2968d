import CourierDomain
import Foundation
import HTTPTypes
import Testing

/// The per-version table of the IETF draft's fields (decision 2707) and the reading of a
/// refused version (decision 2708).
@Suite("IETFInterop")
struct IETFInteropTests {
  func response(_ status: Int, _ fields: HTTPFields = [:]) -> HTTPResponse {
    HTTPResponse(status: .init(code: status), headerFields: fields)
  }

  /// One row of the table: completeness field name, append type, limits, lifetime member,
  /// gone status, `?0` append status, `Accept-Patch` on `OPTIONS`.
  struct Row: Sendable, CustomTestStringConvertible {
    var version: Int
    var completeness: String
    var appendType: String
    var limits: Bool
    var lifetime: String?
    var gone: Int
    var incompleteAppend: Int
    var acceptPatch: Bool
    var testDescription: String { "interop \(version)" }
  }

  static let table: [Row] = [
    Row(
      version: 3, completeness: "Upload-Incomplete", appendType: "application/octet-stream",
      limits: false, lifetime: nil, gone: 404, incompleteAppend: 201, acceptPatch: false),
    Row(
      version: 4, completeness: "Upload-Complete", appendType: "application/octet-stream",
      limits: false, lifetime: nil, gone: 404, incompleteAppend: 201, acceptPatch: false),
    Row(
      version: 5, completeness: "Upload-Complete", appendType: "application/octet-stream",
      limits: false, lifetime: nil, gone: 404, incompleteAppend: 201, acceptPatch: false),
    Row(
      version: 6, completeness: "Upload-Complete", appendType: "application/partial-upload",
      limits: true, lifetime: "expires", gone: 404, incompleteAppend: 201, acceptPatch: false),
    Row(
      version: 7, completeness: "Upload-Complete", appendType: "application/partial-upload",
      limits: true, lifetime: "max-age", gone: 410, incompleteAppend: 204, acceptPatch: false),
    Row(
      version: 8, completeness: "Upload-Complete", appendType: "application/partial-upload",
      limits: true, lifetime: "max-age", gone: 410, incompleteAppend: 204, acceptPatch: true),
  ]

  @Test("each version's fields and answers", arguments: table)
  func row(_ row: Row) throws {
    let interop = try #require(IETFInterop(row.version))
    #expect(interop.description == String(row.version))
    let complete = interop.completeness(true)
    let partial = interop.completeness(false)
    #expect(complete.name.rawName == row.completeness)
    // Interop 3's field is the inverse.
    #expect(complete.value == (row.version == 3 ? "?0" : "?1"))
    #expect(partial.value == (row.version == 3 ? "?1" : "?0"))
    #expect(interop.appendType == row.appendType)
    #expect(interop.namesLimits == row.limits)
    #expect(interop.lifetimeMember == row.lifetime)
    #expect(interop.goneStatus == row.gone)
    #expect(interop.incompleteAppendStatus == row.incompleteAppend)
    #expect(interop.optionsNameAcceptPatch == row.acceptPatch)
    let fields = IETFUpload.creationFields(
      complete: false, length: 10, digest: nil, interop: interop)
    #expect(fields[.uploadDraftInteropVersion] == String(row.version))
    #expect(fields[complete.name] == partial.value)
    // An answer's completeness in this version's field.
    let answer = response(204, [complete.name: complete.value])
    #expect(interop.isComplete(answer) == true)
    #expect(interop.namesCompleteness(answer))
    #expect(interop.isComplete(response(204, [partial.name: partial.value])) == false)
  }

  @Test("versions: 3 to 8 only; a saved record without one speaks 8")
  func versions() {
    #expect(IETFInterop(2) == nil)
    #expect(IETFInterop(9) == nil)
    #expect(IETFInterop.current.number == 8)
    #expect(IETFInterop.saved(nil) == .current)
    #expect(IETFInterop.saved(3) == IETFInterop(3))
    #expect(IETFInterop.saved(42) == .current)
  }

  @Test("a resume record keeps its version; one saved before versions were kept speaks 8")
  func recordVersion() throws {
    var record = ResumableUpload(
      endpoint: "http://h/photos", file: "/f", fileSize: 1, fileModified: 0, sha256: "",
      length: 1, idempotencyKey: "k", uploadURL: "http://h/resumable/1")
    record.interopVersion = 3
    let saved = try JSONEncoder().encode(record)
    let read = try JSONDecoder().decode(ResumableUpload.self, from: saved)
    #expect(IETFInterop.saved(read.interopVersion) == IETFInterop(3))
    // The same record as an older Courier wrote it: no interopVersion member.
    var object = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
    object["interopVersion"] = nil
    let old = try JSONDecoder().decode(
      ResumableUpload.self, from: try JSONSerialization.data(withJSONObject: object))
    #expect(old.interopVersion == nil)
    #expect(IETFInterop.saved(old.interopVersion) == .current)
    #expect(old.uploadURL == record.uploadURL)
  }

  @Test("interop 3: a missing Upload-Incomplete means complete; Upload-Complete is not read")
  func interopThreeAbsence() throws {
    let three = try #require(IETFInterop(3))
    #expect(three.isComplete(response(204)) == true)
    #expect(!three.namesCompleteness(response(204, [.uploadComplete: "?1"])))
    #expect(IETFInterop.current.isComplete(response(204)) == nil)
    #expect(IETFInterop.current.isComplete(response(204, [.uploadIncomplete: "?0"])) == nil)
  }

  @Test("a 104 counts only with the version the request named")
  func resumptionByVersion() throws {
    let target = try #require(URL(string: "http://h/photos"))
    let offer = response(104, [.location: "/resumable/1", .uploadDraftInteropVersion: "5"])
    #expect(
      IETFUpload.resumption(offer, target: target, interop: try #require(IETFInterop(5))) != nil)
    #expect(IETFUpload.resumption(offer, target: target) == nil)
  }

  @Test("a refused version: the problem's list, or another version named in a 400")
  func refusal() throws {
    let problem = Data(
      #"{"type":"urn:courier:problem:unsupported-interop-version","supported":[6,3,4]}"#.utf8)
    let sent = IETFInterop.current
    #expect(IETFInterop.refusal(response(400), body: problem, sent: sent) == [3, 4, 6])
    let bare = Data(#"{"type":"urn:courier:problem:unsupported-interop-version"}"#.utf8)
    #expect(IETFInterop.refusal(response(400), body: bare, sent: sent) == [])
    // SwiftNIO's answer: a 400 with its own version, no body.
    let named = response(400, [.uploadDraftInteropVersion: "6"])
    #expect(IETFInterop.refusal(named, body: Data(), sent: sent) == [6])
    #expect(
      IETFInterop.refusal(
        response(400, [.uploadDraftInteropVersion: "8"]), body: Data(), sent: sent)
        == nil)
    #expect(IETFInterop.refusal(response(422), body: Data("{}".utf8), sent: sent) == nil)
    #expect(IETFInterop.refusal(response(500), body: problem, sent: sent) == nil)
    #expect(IETFInterop.shared([3, 4, 6, 9], refused: sent) == IETFInterop(6))
    #expect(IETFInterop.shared([8], refused: sent) == nil)
    #expect(IETFInterop.shared([9, 10], refused: sent) == nil)
  }

  @Test("no version agreed: a refusal that names both sides' versions")
  func unsupportedMessage() throws {
    let error = IETFInterop.unsupported([9, 10], refused: [.current], pinned: false, status: 400)
    #expect(error.kind == .business)
    #expect(error.code == "ietf_interop_unsupported")
    #expect(
      error.serverMessage
        == "The upload server refused interop 8 of the IETF resumable uploads draft: it takes "
        + "interop versions 9, 10, and Courier speaks 3 to 8. The upload was not sent.")
    let twice = IETFInterop.unsupported(
      [], refused: [.current, try #require(IETFInterop(5))], pinned: false, status: 400)
    #expect(twice.serverMessage?.contains("interop 8 and then interop 5") == true)
    #expect(twice.serverMessage?.contains("it named no version it takes") == true)
  }
}
