import CourierDomain
import CourierPorts
import HTTPTypes
import Logging
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The protocol exchange of one upload: each `attempt()` starts by learning where the server
/// stands (a creation, or a `HEAD`) and sends the rest.
struct TusExchange<C: Clock>: Sendable where C.Duration == Duration {
  let tus: TusTransfer<C>
  /// The options of each request: the call's, then the attempt's (`attempt(_:)`).
  var options: TransportOptions
  let run: TusRun
  let request: UploadRequest
  let file: URL
  let length: Int64
  let metadata: String
  let onState: @Sendable (UploadState) -> Void
  let onResume: @Sendable (Int64, Int64) -> Void
  let throttle: ProgressThrottle

  var transport: any Transport { tus.transport }
  var confirmation: DeliveryProof.UploadConfirmation { request.confirmation }

  /// One attempt, to the answer that proved completion.
  /// - Parameter number: the attempt, from 1.
  func attempt(_ number: Int) async throws -> (HTTPResponse, ResponseBody) {
    var this = self
    this.options = options.forAttempt(number)
    return try await this.attempt()
  }

  private func attempt() async throws -> (HTTPResponse, ResponseBody) {
    throttle.reset()
    let capabilities = try await discover()
    let creating = run.record.uploadURL == nil
    // A creation in this attempt sends from byte 0 itself (creation-with-upload): its offset
    // afterwards is progress, not a resume. A HEAD's offset is what the server held already.
    var announced = creating
    if creating {
      run.started(at: 0)
      onState(.uploading(sent: 0, total: length))
    }
    var (step, last) =
      creating ? try await create(capabilities) : try await head()
    // Which exchange gave `step`: a HEAD's offset is where to send from, not a confirmation.
    var exchange: Tus.Exchange = creating ? .creation : .head
    var unsettled = 0
    while true {
      switch step {
      case .complete:
        return last
      case .send(let from):
        try run.confirmed(
          Tus.confirmedOffset(after: step, of: exchange, confirmed: run.record.confirmedOffset))
        if !announced {
          // Progress starts at what the server holds, never at 0 for a resumed upload.
          announced = true
          run.started(at: from)
          if from > 0 {
            tus.executor.metrics.resumed(bytes: from)
            onResume(from, length)
          }
          onState(.uploading(sent: from, total: length))
        }
        let before = from
        (step, last) = try await patch(from: from, capabilities)
        exchange = .patch
        if case .send(let next) = step, next > before { unsettled = 0 }
      case .resync:
        unsettled += 1
        if unsettled > 3 {
          throw Tus.anomaly("tus_offset_unsettled", last.0, "kept changing where it stands")
        }
        (step, last) = try await head()
        exchange = .head
      case .restart:
        guard try run.restart() else {
          throw CourierError(
            .business, status: last.0.status.code, code: "upload_gone",
            serverMessage: "The server lost the upload twice; it was not sent.")
        }
        announced = true
        run.started(at: 0)
        onState(.uploading(sent: 0, total: length))
        (step, last) = try await create(capabilities)
        exchange = .creation
      case .resendChunk:
        (step, last) = try await head()
        exchange = .head
      case .fail(let error):
        throw error
      }
    }
  }

  /// `OPTIONS` on the creation URL, once per run (decision 1303, `Tus.afterOptions`): inside
  /// the attempt, so a transient failure is retried like any other, and a page that is not
  /// the server's (a captive portal) stops the upload before a byte of the file goes to it.
  private func discover() async throws -> Tus.Capabilities {
    if let known = run.capabilities { return known }
    let (response, body) = try await transport.send(
      try HTTPRequest(checking: request.target, method: .options), body: nil,
      options: options)
    switch Tus.afterOptions(response, body: body.bytes) {
    case .offers(let capabilities):
      run.capabilities = capabilities
      return capabilities
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

  private func uploadURL() throws -> URL {
    guard let text = run.record.uploadURL, let url = URL(string: text) else {
      throw CourierError(.unexpected, underlying: "no upload URL")
    }
    return url
  }

  /// An answer and the step it leads to.
  typealias Answered = (step: Tus.Step, answer: (HTTPResponse, ResponseBody))

  private func create(_ capabilities: Tus.Capabilities) async throws -> Answered {
    var http = try tusRequest(
      .post, request.target,
      [
        .uploadLength: String(length), .uploadMetadata: metadata,
        .idempotencyKey: run.record.idempotencyKey,
      ])
    var body: RequestBody?
    var sent: Int64 = 0
    if capabilities.createsWithUpload && length > 0 {
      sent = min(run.chunk, length)
      http.headerFields[.contentType] = Tus.offsetContentType
      if let algorithm = capabilities.checksumAlgorithm {
        http.headerFields[.uploadChecksum] = try checksum(algorithm, from: 0, length: sent)
      }
      body = .segments([.file(file, offset: 0, length: sent)])
    }
    // A body lasts what the link needs: bounded by lack of progress, not by total time.
    var options = body == nil ? self.options : self.options.boundedByProgress()
    options.progress = progress(from: 0)
    let answer = try await transport.send(http, body: body, options: options)
    let response = answer.0
    var step = Tus.afterCreation(
      response, body: answer.1.bytes, length: length, sentBody: sent, confirmation: confirmation)
    if case .fail = step { return (step, answer) }
    guard let location = response.headerFields[.location],
      let url = URL(string: location, relativeTo: request.target)?.absoluteURL
    else { return (step, answer) }
    try run.update { $0.uploadURL = url.absoluteString }
    if response.headerFields[.idempotentReplayed]?.lowercased() == "true",
      case .send = step
    {
      // A replayed answer tells the offset of the first attempt, not of now.
      step = .resync
    }
    return (step, answer)
  }

  private func head() async throws -> Answered {
    let http = try tusRequest(.head, try uploadURL())
    let answer = try await transport.send(http, body: nil, options: options)
    let step = Tus.afterHead(
      answer.0, body: answer.1.bytes, length: length, confirmed: run.record.confirmedOffset,
      confirmation: confirmation)
    return (step, answer)
  }

  private func patch(from: Int64, _ capabilities: Tus.Capabilities) async throws -> Answered {
    let chunk = min(run.chunk, length - from)
    var resends = 0
    while true {
      var http = try tusRequest(
        .patch, try uploadURL(),
        [.uploadOffset: String(from), .contentType: Tus.offsetContentType])
      if let algorithm = capabilities.checksumAlgorithm {
        http.headerFields[.uploadChecksum] = try checksum(algorithm, from: from, length: chunk)
      }
      var options = self.options.boundedByProgress()
      options.progress = progress(from: from)
      let clock = tus.executor.clock
      let started = clock.now
      let answer: (HTTPResponse, ResponseBody)
      do {
        answer = try await transport.send(
          http, body: .segments([.file(file, offset: from, length: chunk)]), options: options)
      } catch {
        // A link that slowed down (a timeout) or broke: the resumed attempt starts small.
        run.shrink(minimum: tus.minimumChunk)
        throw error
      }
      if answer.0.status.kind == .successful {
        run.adapt(
          sent: chunk, took: started.duration(to: clock.now), minimum: tus.minimumChunk,
          maximum: tus.maximumChunk)
      }
      let step = Tus.afterPatch(
        answer.0, body: answer.1.bytes, from: from, chunk: chunk, length: length,
        resends: resends, confirmation: confirmation)
      if step == .resendChunk {
        resends += 1
        continue
      }
      return (step, answer)
    }
  }

  private func checksum(_ algorithm: String, from: Int64, length: Int64) throws -> String {
    let digest = try tus.hasher.sha256(of: file, offset: from, length: length)
    return "\(algorithm) \(Data(digest).base64EncodedString())"
  }

  private func progress(from: Int64) -> @Sendable (TransferProgress) -> Void {
    let total = length
    let onState = onState
    let throttle = throttle
    return { value in
      let sent = min(total, from + value.sent)
      if throttle.admit(sent: sent, total: total) { onState(.uploading(sent: sent, total: total)) }
    }
  }
}
