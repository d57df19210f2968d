import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// tus 1.0.0's exchanges for `ResumableTransfer` (decision 1301): `OPTIONS` once per run, a
/// creation (with the first piece where the server offers creation-with-upload), `HEAD`, and
/// `PATCH`es with `Upload-Checksum` where the server offers sha256.
struct TusStrategy: ResumableStrategy {
  let request: UploadRequest
  let file: URL
  let length: Int64
  let metadata: String
  let hasher: any FileHasher

  var codePrefix: String { "tus" }
  var savesBeforeCreation: Bool { true }
  var confirmation: DeliveryProof.UploadConfirmation { request.confirmation }

  func cancel(_ url: URL, of saved: ResumableUpload) throws -> HTTPRequest {
    try Self.deletion(url)
  }

  /// tus's `DELETE` of the upload at `url` (the termination extension).
  /// - Parameter url: the upload's address.
  /// - Returns: the request.
  static func deletion(_ url: URL) throws -> HTTPRequest {
    try HTTPRequest(checking: url, method: .delete, headerFields: [.tusResumable: Tus.version])
  }

  /// `OPTIONS` on the creation URL, once per run (decision 1303, `Tus.afterOptions`): inside
  /// the attempt, so a transient failure is retried like any other, and a page that is not
  /// the server's (a captive portal) stops the upload before a byte of the file goes to it.
  func prepare(_ context: ResumableContext) async throws {
    if context.run.capabilities != nil { return }
    let (response, body) = try await context.transport.send(
      try HTTPRequest(checking: request.target, method: .options), body: nil,
      options: context.options)
    switch Tus.afterOptions(response, body: body.bytes) {
    case .offers(let capabilities):
      context.run.capabilities = capabilities
    case .fail(let error):
      throw error
    }
  }

  /// A tus request to `url`: `Tus-Resumable`, then `extra` in order.
  private func tusRequest(
    _ method: HTTPRequest.Method, _ url: URL, _ extra: HTTPFields = [:]
  ) throws -> HTTPRequest {
    var fields: HTTPFields = [.tusResumable: Tus.version]
    fields.append(contentsOf: extra)
    return try HTTPRequest(checking: url, method: method, headerFields: fields)
  }

  func create(_ context: ResumableContext) async throws -> Answered {
    let capabilities = context.run.capabilities ?? .assumed
    var http = try tusRequest(
      .post, request.target,
      [
        .uploadLength: String(length), .uploadMetadata: metadata,
        .idempotencyKey: context.run.record.idempotencyKey,
      ])
    var body: RequestBody?
    var sent: Int64 = 0
    // Without the bytes for a server that may not honour the key (decision 2515): a kill before
    // its answer then wastes an empty upload, never a whole stored file no one names.
    if capabilities.createsWithUpload && length > 0 && !request.bytesAfterCreation {
      sent = context.run.nextPiece(left: length)
      http.headerFields[.contentType] = Tus.offsetContentType
      if let algorithm = capabilities.checksumAlgorithm {
        http.headerFields[.uploadChecksum] = try checksum(algorithm, from: 0, length: sent)
      }
      body = .segments([.file(file, offset: 0, length: sent)])
    }
    // A body lasts what the link needs: bounded by lack of progress, not by total time.
    var options = body == nil ? context.options : context.options.boundedByProgress()
    options.progress = context.progress(from: 0)
    let answer = try await context.transport.send(http, body: body, options: options)
    let response = answer.0
    var step = Tus.afterCreation(
      response, body: answer.1.bytes, length: length, sentBody: sent, confirmation: confirmation)
    if case .fail = step { return (step, answer) }
    guard let location = response.headerFields[.location],
      let url = URL(string: location, relativeTo: request.target)?.absoluteURL
    else { return (step, answer) }
    try context.run.update { $0.uploadURL = url.absoluteString }
    if response.headerFields[.idempotentReplayed]?.lowercased() == "true",
      case .send = step
    {
      // A replayed answer tells the offset of the first attempt, not of now.
      step = .resync
    }
    return (step, answer)
  }

  func head(_ context: ResumableContext) async throws -> Answered {
    let http = try tusRequest(.head, try context.uploadURL())
    let answer = try await context.transport.send(http, body: nil, options: context.options)
    let step = Tus.afterHead(
      answer.0, body: answer.1.bytes, length: length,
      confirmed: context.run.record.confirmedOffset, confirmation: confirmation)
    return (step, answer)
  }

  func append(_ context: ResumableContext, from: Int64, piece: Int64) async throws -> Answered {
    let capabilities = context.run.capabilities ?? .assumed
    var resends = 0
    while true {
      var http = try tusRequest(
        .patch, try context.uploadURL(),
        [.uploadOffset: String(from), .contentType: Tus.offsetContentType])
      if let algorithm = capabilities.checksumAlgorithm {
        http.headerFields[.uploadChecksum] = try checksum(algorithm, from: from, length: piece)
      }
      var options = context.options.boundedByProgress()
      options.progress = context.progress(from: from)
      let answer = try await context.transport.send(
        http, body: .segments([.file(file, offset: from, length: piece)]), options: options)
      let step = Tus.afterPatch(
        answer.0, body: answer.1.bytes, from: from, chunk: piece, length: length,
        resends: resends, confirmation: confirmation)
      if step == .resendChunk {
        resends += 1
        continue
      }
      return (step, answer)
    }
  }

  /// tus's completing answers carry their own proof (`Tus.completion`).
  func proven(_ answer: (HTTPResponse, ResponseBody), after exchange: Tus.Exchange) throws
    -> (HTTPResponse, ResponseBody)
  { answer }

  private func checksum(_ algorithm: String, from: Int64, length: Int64) throws -> String {
    let digest = try hasher.sha256(of: file, offset: from, length: length)
    return "\(algorithm) \(Data(digest).base64EncodedString())"
  }
}
