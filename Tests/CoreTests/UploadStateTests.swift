import CourierCore
import CourierDomain
import Foundation
import HTTPTypes
import Testing

@Suite("UploadState")
struct UploadStateTests {
  static let result = UploadResult(
    response: HTTPResponse(status: .created),
    verdict: CompressionDecision.Verdict(
      send: .compressed, reason: .compressed, message: "smaller"),
    bodyLength: 10, idempotencyKey: "k")

  @Test("a user reads progress while sending and the result at the end, nothing else")
  func readers() {
    let sending = UploadState.uploading(sent: 4, total: 10)
    #expect(sending.progress == TransferProgress(sent: 4, total: 10))
    #expect(sending.result == nil)
    let done = UploadState.succeeded(Self.result)
    #expect(done.progress == nil)
    #expect(done.result?.response.status == .created)
    #expect(UploadState.compressing.progress == nil && UploadState.compressing.result == nil)
  }

  @Test("each state reads as one line for a person")
  func descriptions() {
    #expect("\(UploadState.compressing)" == "compressing")
    #expect("\(UploadState.uploading(sent: 4, total: 10))" == "uploading 4 of 10 bytes")
    #expect("\(UploadState.succeeded(Self.result))" == "uploaded (201)")
    let retrying = UploadState.retrying(
      attempt: 1, maxAttempts: 4, delay: .seconds(1),
      reason: CourierError(.overloaded, status: 503))
    #expect("\(retrying)".contains("attempt 2 of 4"))
  }
}
