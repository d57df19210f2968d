import CourierDomain
import Foundation
import HTTPTypes
import Testing

@Suite("IETFUpload")
struct IETFUploadTests {
  let target = URL(string: "http://127.0.0.1:8081/photos?title=x") ?? URL(fileURLWithPath: "/")

  func response(_ status: Int, _ fields: HTTPFields = [:]) -> HTTPResponse {
    HTTPResponse(status: .init(code: status), headerFields: fields)
  }

  @Test("a 104 with the interop version gives the address; without it, or another, is ignored")
  func resumptionOffer() throws {
    let offer = response(
      104,
      [.location: "/resumable/ab", .uploadDraftInteropVersion: "8", .uploadLimit: "max-size=9"])
    let said = try #require(IETFUpload.resumption(offer, target: target))
    #expect(said.location?.absoluteString == "http://127.0.0.1:8081/resumable/ab")
    #expect(said.offset == nil)
    #expect(IETFUpload.resumption(response(104, [.location: "/r"]), target: target) == nil)
    #expect(
      IETFUpload.resumption(
        response(104, [.location: "/r", .uploadDraftInteropVersion: "7"]), target: target) == nil)
    #expect(
      IETFUpload.resumption(
        response(103, [.location: "/r", .uploadDraftInteropVersion: "8"]), target: target) == nil)
    let progress = response(104, [.uploadOffset: "1048576", .uploadDraftInteropVersion: "8"])
    #expect(IETFUpload.resumption(progress, target: target)?.offset == 1_048_576)
  }

  @Test("Upload-Limit: the integers it names, anything else skipped")
  func limits() {
    let limits = IETFUpload.Limits("max-size=4294967296, max-append-size=1048576, max-age=60")
    #expect(limits.maxSize == 4_294_967_296)
    #expect(limits.maxAppendSize == 1_048_576)
    #expect(IETFUpload.Limits("max-append-size=-1, max-size=?1").maxAppendSize == nil)
    #expect(IETFUpload.Limits(nil) == IETFUpload.Limits(""))
  }

  @Test("sf-integers: digits only, at most 15")
  func integers() {
    #expect(IETFUpload.integer(" 42 ") == 42)
    #expect(IETFUpload.integer("-1") == nil)
    #expect(IETFUpload.integer("1e3") == nil)
    #expect(IETFUpload.integer("1234567890123456") == nil)
  }

  @Test("a HEAD: the offset to send from, a completion naming its record, a gone upload")
  func afterHead() {
    let partial = response(204, [.uploadOffset: "10", .uploadComplete: "?0"])
    #expect(
      IETFUpload.afterHead(partial, body: Data(), length: 20, confirmation: .record)
        == .send(from: 10))
    let done = response(204, [.uploadOffset: "20", .uploadComplete: "?1", .courierPhotoID: "p1"])
    #expect(
      IETFUpload.afterHead(done, body: Data(), length: 20, confirmation: .record)
        == .complete(recordID: "p1"))
    let anonymous = response(204, [.uploadOffset: "20", .uploadComplete: "?1"])
    guard
      case .fail = IETFUpload.afterHead(anonymous, body: Data(), length: 20, confirmation: .record)
    else {
      Issue.record("a completion without the record is no proof")
      return
    }
    #expect(
      IETFUpload.afterHead(response(410), body: Data(), length: 20, confirmation: .status)
        == .restart)
    #expect(
      IETFUpload.afterHead(response(404), body: Data(), length: 20, confirmation: .status)
        == .restart)
    guard
      case .fail(let beyond) = IETFUpload.afterHead(
        response(204, [.uploadOffset: "21"]), body: Data(), length: 20, confirmation: .status)
    else {
      Issue.record("an offset past the length is refused")
      return
    }
    #expect(beyond.code == "ietf_offset_beyond")
  }

  @Test("a write's answer: completion, the next offset, a mismatch or 413 re-asks, gone restarts")
  func afterWrite() {
    #expect(
      IETFUpload.afterWrite(response(200), body: Data(), end: 20, length: 20)
        == .complete(recordID: nil))
    #expect(
      IETFUpload.afterWrite(
        response(204, [.uploadOffset: "8", .uploadComplete: "?0"]), body: Data(), end: 10,
        length: 20) == .send(from: 8))
    let problem =
      Data(
        #"{"type":"https://iana.org/assignments/http-problem-types#mismatching-upload-offset","#
          .utf8) + Data(#""status":409,"expected-offset":4,"provided-offset":8}"#.utf8)
    #expect(
      IETFUpload.afterWrite(response(409), body: problem, end: 10, length: 20) == .resync)
    #expect(IETFUpload.afterWrite(response(413), body: Data(), end: 10, length: 20) == .resync)
    #expect(IETFUpload.afterWrite(response(410), body: Data(), end: 10, length: 20) == .restart)
    guard
      case .fail = IETFUpload.afterWrite(response(409), body: Data("{}".utf8), end: 10, length: 20)
    else {
      Issue.record("another conflict is a refusal")
      return
    }
  }

  @Test("OPTIONS offers the draft by Accept-Patch: application/partial-upload")
  func offers() {
    #expect(
      IETFUpload.offers(
        response(204, [.acceptPatch: "application/json, application/partial-upload"])))
    #expect(!IETFUpload.offers(response(204, [.acceptPatch: "application/json"])))
    #expect(!IETFUpload.offers(response(405, [.acceptPatch: "application/partial-upload"])))
  }

  @Test("a creation's fields: the interop version, completeness, length and digest")
  func creationFields() {
    let fields = IETFUpload.creationFields(complete: false, length: 12, digest: [0, 1])
    #expect(fields[.uploadDraftInteropVersion] == "8")
    #expect(fields[.uploadComplete] == "?0")
    #expect(fields[.uploadLength] == "12")
    #expect(fields[.reprDigest] == "sha-256=:AAE=:")
  }
}
