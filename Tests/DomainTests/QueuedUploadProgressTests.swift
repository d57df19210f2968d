import CourierDomain
import Foundation
import Testing

@Suite("QueuedUploadProgress")
struct QueuedUploadProgressTests {
  static func progress(length: Int64, confirmed: Int64, sending: Int64?, readable: Bool = true)
    -> QueuedUploadProgress
  {
    let upload = QueuedUpload(
      transfer: .tus, tusEndpoint: "http://h/uploads", formTarget: nil, title: "t",
      filename: "video.mp4", contentType: "video/mp4", length: length, boundary: "b",
      source: "/v.mp4",
      verdict: .init(send: .original, reason: .notAnImage, message: ""))
    let operation = upload.operation(uploadID: "u1", enqueuedAt: Date(timeIntervalSince1970: 0))
    return QueuedUploadProgress(
      entry: OutboxEntry(sequence: 1, operation: operation), upload: readable ? upload : nil,
      confirmed: confirmed, sending: sending)
  }

  // (length, confirmed, sending, shown, percent)
  static let rows: [(Int64, Int64, Int64?, Int64, Int)] = [
    (1000, 0, nil, 0, 0),
    (1000, 400, nil, 400, 40),
    (1000, 400, 650, 650, 65),
    // A transfer that just resumed reports the confirmed offset, never less: no bar back to 0.
    (1000, 400, 0, 400, 40),
    (1000, 999, nil, 999, 99),
    (1000, 1000, nil, 1000, 100),
    (0, 0, nil, 0, 100),
  ]

  @Test("the bytes shown and the percentage", arguments: rows)
  func shown(_ length: Int64, _ confirmed: Int64, _ sending: Int64?, _ shown: Int64, _ percent: Int)
  {
    let value = Self.progress(length: length, confirmed: confirmed, sending: sending)
    #expect(value.shown == shown)
    #expect(value.percent == percent)
    #expect(value.total == length)
  }

  @Test("an unreadable entry is named by its id, with nothing to send")
  func unreadable() {
    let value = Self.progress(length: 10, confirmed: 0, sending: nil, readable: false)
    #expect(value.name == "u1")
    #expect(value.id == "u1")
    #expect(value.total == 0)
  }
}
