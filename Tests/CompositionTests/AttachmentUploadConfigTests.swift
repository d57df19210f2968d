import CourierDomain
import CourierLinux
import Foundation
import Testing

/// `attachment_upload_url` (decision 2515) through the layers: defaults, file, environment,
/// flags; and the queued file part it makes.
@Suite("Attachment upload configuration")
struct AttachmentUploadConfigTests {
  let home = ["HOME": "/home/u"]
  let file = "/home/u/.config/courier/config.json"

  func load(
    flags: [String: String] = [:], environment: [String: String] = [:], contents: String? = nil
  ) throws -> CourierConfig {
    try ConfigLoader.load(flags: flags, environment: home.merging(environment) { $1 }) { path in
      path == file ? contents.map { Data($0.utf8) } : nil
    }
  }

  @Test("unset by default; the file, then the environment, then a flag; none turns it off")
  func layers() throws {
    #expect(try load().attachmentUploadURL == nil)
    let fromFile = try load(contents: #"{"attachment_upload_url": "http://files.example/files/"}"#)
    #expect(fromFile.attachmentUploadURL?.absoluteString == "http://files.example/files/")
    let environment = try load(
      environment: ["COURIER_ATTACHMENT_UPLOAD_URL": "https://tus.example/up/"],
      contents: #"{"attachment_upload_url": "http://files.example/files/"}"#)
    #expect(environment.attachmentUploadURL?.absoluteString == "https://tus.example/up/")
    let off = try load(
      flags: ["attachment_upload_url": "none"],
      environment: ["COURIER_ATTACHMENT_UPLOAD_URL": "https://tus.example/up/"])
    #expect(off.attachmentUploadURL == nil)
  }

  @Test("a value that is not an http(s) URL names its layer and key")
  func refused() throws {
    let error = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_ATTACHMENT_UPLOAD_URL": "files.example/files"])
    }
    #expect(error.key == "attachment_upload_url")
    #expect(error.source == "environment variable COURIER_ATTACHMENT_UPLOAD_URL")
  }

  @Test("a file part for another server keeps its bytes-after-creation mark in the payload")
  func payloadRoundTrip() throws {
    var upload = QueuedUpload(
      transfer: .tus, tusEndpoint: "http://files.example/files/", formTarget: nil,
      tusConfirmation: .status, title: "sunset.jpg", filename: "sunset.jpg",
      contentType: "image/jpeg", length: 10, boundary: "b", source: "/tmp/sunset.jpg",
      verdict: CompressionDecision.Verdict(send: .original, reason: .notAnImage, message: "m"))
    #expect(try QueuedUpload(payload: upload.payload).bytesAfterCreation == false)
    #expect(upload.payload[QueuedUpload.bytesAfterCreationMember] == nil)
    upload.bytesAfterCreation = true
    let read = try QueuedUpload(payload: upload.payload)
    #expect(read.bytesAfterCreation)
    #expect(read == upload)
  }
}
