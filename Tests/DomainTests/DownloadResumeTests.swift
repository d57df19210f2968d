import CourierDomain
import Foundation
import HTTPTypes
import Testing

/// The pure rules of a resumed download: `If-Range`, `Repr-Digest`, `Content-Range`, and the
/// sidecar a head describes (decision 2501).
@Suite("DownloadResume")
struct DownloadResumeTests {
  let digest = Data((0..<32).map { UInt8($0) })

  @Test(
    "Repr-Digest: the sha-256 member of the dictionary, parameters and other members ignored",
    arguments: [
      ("sha-256=:B64:", true), ("sha-512=:AAAA:, sha-256=:B64:", true),
      ("sha-256=:B64:;x=1", true), (" sha-256 = :B64: ", true), ("sha-512=:B64:", false),
      ("sha-256=B64", false), ("sha-256=:AAAA:", false), ("", false),
    ])
  func reprDigest(_ value: String, _ found: Bool) {
    let text = value.replacingOccurrences(of: "B64", with: digest.base64EncodedString())
    let parsed = DownloadResume.sha256(reprDigest: text)
    #expect((parsed == Array(digest)) == found, "\(text)")
  }

  @Test(
    "Content-Range: bytes F-L/SIZE or F-L/*; anything else is nil",
    arguments: [
      ("bytes 0-9/10", 0, 10), ("bytes 5-9/*", 5, nil), ("Bytes 100-199/1000", 100, 1000),
      ("bytes 9-5/10", -1, nil), ("bytes 0-9/9", -1, nil), ("bytes */10", -1, nil),
      ("items 0-9/10", -1, nil), ("bytes 0-9", -1, nil),
    ] as [(String, Int, Int?)])
  func contentRange(_ value: String, _ first: Int, _ size: Int?) {
    let parsed = DownloadResume.contentRange(value)
    if first < 0 {
      #expect(parsed == nil, "\(value)")
    } else {
      #expect(parsed?.first == Int64(first), "\(value)")
      #expect(parsed?.size == size.map(Int64.init), "\(value)")
    }
  }

  @Test("only a strong ETag goes in If-Range, else Last-Modified, else nothing")
  func ifRange() {
    #expect(DownloadResume.isStrong(etag: "\"a\""))
    #expect(!DownloadResume.isStrong(etag: "W/\"a\""))
    #expect(DownloadResume.ifRange(for: .init(url: "u", partial: "p", etag: "\"a\"")) == "\"a\"")
    #expect(
      DownloadResume.ifRange(
        for: .init(url: "u", partial: "p", etag: "W/\"a\"", lastModified: "date")) == "date")
    #expect(DownloadResume.ifRange(for: .init(url: "u", partial: "p", etag: "W/\"a\"")) == nil)
  }

  @Test("the record of a head: validators, length from Content-Length or a 206's Content-Range")
  func recordOfHead() {
    let fields: HTTPFields = [
      .eTag: "\"e\"", .lastModified: "d", .contentLength: "10",
      .reprDigest: "sha-256=:\(digest.base64EncodedString()):",
    ]
    let whole = DownloadRecord(
      HTTPResponse(status: .ok, headerFields: fields), url: "u", partial: "p")
    #expect(whole.length == 10 && whole.etag == "\"e\"" && whole.lastModified == "d")
    #expect(whole.digest == digest.base64EncodedString())
    var ranged = fields
    ranged[.contentRange] = "bytes 4-9/10"
    ranged[.contentLength] = "6"
    let part = DownloadRecord(
      HTTPResponse(status: .partialContent, headerFields: ranged), url: "u", partial: "p")
    #expect(part.length == 10)
    #expect(whole.sameRepresentation(as: part))
    #expect(!whole.sameRepresentation(as: .init(url: "u", partial: "p", etag: "\"other\"")))
    #expect(!whole.sameRepresentation(as: .init(url: "u", partial: "p", etag: "W/\"e\"")))
  }
}
