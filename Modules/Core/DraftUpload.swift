import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A form upload the server may make resumable with the IETF draft (decision 2702): the
/// `multipart/form-data` body a plain upload sends, posted with `Upload-Complete: ?1` and the
/// interop version. A server that speaks the draft answers `104 (Upload Resumption Supported)`
/// with the upload's address before it reads the content; the address is saved at once, so an
/// attempt cut after it resumes (`HEAD` for the offset, `PATCH` with the rest) instead of
/// sending everything again, in this process or, with a `store`, in the next. A server that
/// does not speak it (or a transport that hides interim answers: URLSession) sees a plain
/// upload, and an interrupted one is posted again whole, as `FormUpload` would.
///
/// `transport` makes one attempt per call: the retries are `executor`'s, so that a retry after
/// the `104` is a resume, never a second upload.
struct DraftUpload<C: Clock>: Sendable where C.Duration == Duration {
  let transport: any Transport
  let executor: RetryExecutor<C>
  let store: (any ResumableUploadStore)?
  let options: TransportOptions
  let progressGranularity: Int64

  /// The largest representation sent with its `Repr-Digest` (RFC 9530): 8 MiB, read once more
  /// before the first byte goes.
  static var digestLimit: Int64 { 8 << 20 }

  /// The SHA-256 of the segments' bytes.
  static func sha256(_ segments: [BodySegment]) throws -> [UInt8] {
    var hash = SHA256()
    for segment in segments { try segment.read { hash.update($0) } }
    return hash.finalize()
  }

  /// What the upload's final answer, and the way there, were.
  struct Answer {
    /// The answer that proved the delivery.
    var response: HTTPResponse
    /// Its body (empty when a `HEAD` proved a completion the process did not hear).
    var body: ResponseBody
    /// The attempts made.
    var attempts: Int
    /// The representation's length.
    var bodyLength: Int64
    /// The upload resource, when the server offered resumption.
    var uploadURL: URL?
    /// Where the attempt that completed the upload started sending, when it resumed.
    var resumedAt: Int64?
  }

  /// Sends `layout` to `target` as described above.
  /// - Parameters:
  ///   - layout: the form, laid out under its boundary.
  ///   - target: the target resource (`/photos`).
  ///   - record: what is kept about the upload (`idempotencyKey`, and `uploadURL` when it was
  ///     created by an earlier process), saved under `key` while it runs.
  ///   - key: the record's key in `store`.
  ///   - confirmation: what proves the delivery (decision 0414).
  ///   - fileSize: the file part's size, for the proof.
  ///   - onState: told `uploading` and `retrying`.
  ///   - onResume: told `(offset, total)` when an attempt goes on from bytes the server held.
  /// - Returns: the proven answer.
  /// - Throws: the classified failure, `notTheServer` for an answer that proves nothing,
  ///   `invalidResponse` for an impossible offset.
  func send(
    _ layout: MultipartBodyLayout, to target: URL, record: ResumableUpload, key: String,
    confirmation: DeliveryProof.UploadConfirmation, fileSize: Int64?,
    onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (Int64, Int64) -> Void
  ) async throws -> Answer {
    // Saved once the server offers resumption (its address): a plain upload leaves nothing.
    let run = TusRun(record: record, key: key, store: store, chunk: layout.contentLength)
    let segments = try FormUpload.bodySegments(layout)
    // The whole representation's digest, when reading it once more costs little: the server
    // checks the stored upload against it at completion.
    let digest = layout.contentLength <= Self.digestLimit ? try Self.sha256(segments) : nil
    let exchange = DraftExchange(
      transport: transport, options: options.identifyingCall(), run: run, target: target,
      segments: segments, digest: digest, contentType: layout.contentType,
      length: layout.contentLength, confirmation: confirmation, fileSize: fileSize,
      onState: onState, onResume: onResume,
      throttle: ProgressThrottle(granularity: progressGranularity))
    let callObserver = options.onRetry
    let (attempts, answer) = try await executor.run(
      safeToRepeat: true, logger: options.logger,
      onEvent: { event in
        callObserver?(event)
        if case .retrying(let attempt, let maxAttempts, let delay, let error) = event {
          onState(
            .retrying(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: error))
        }
      }
    ) { attempt in
      (attempt, try await exchange.attempt(attempt))
    }
    run.finish()
    return Answer(
      response: answer.0, body: answer.1, attempts: attempts, bodyLength: layout.contentLength,
      uploadURL: run.record.uploadURL.flatMap(URL.init(string:)), resumedAt: run.resumedAt)
  }
}

/// One upload's exchanges: each `attempt` starts with a creation (no address yet) or a `HEAD`.
struct DraftExchange: Sendable {
  let transport: any Transport
  var options: TransportOptions
  let run: TusRun
  let target: URL
  let segments: [BodySegment]
  /// The whole representation's SHA-256, for `Repr-Digest`; nil when not computed.
  let digest: [UInt8]?
  let contentType: String
  let length: Int64
  let confirmation: DeliveryProof.UploadConfirmation
  let fileSize: Int64?
  let onState: @Sendable (UploadState) -> Void
  let onResume: @Sendable (Int64, Int64) -> Void
  let throttle: ProgressThrottle
  /// The most bytes one request may carry: the server's `max-append-size`, or less after a 413.
  let pieceLimit = PieceLimit()

  typealias Answered = (step: Tus.Step, answer: (HTTPResponse, ResponseBody))

  /// One attempt, to the answer that proved the delivery.
  /// - Parameter number: the attempt, from 1.
  func attempt(_ number: Int) async throws -> (HTTPResponse, ResponseBody) {
    var this = self
    this.options = options.forAttempt(number)
    return try await this.attempt()
  }

  private func attempt() async throws -> (HTTPResponse, ResponseBody) {
    throttle.reset()
    var announced = false
    var (step, last): Answered
    if run.record.uploadURL == nil {
      announced = true
      run.started(at: 0)
      onState(.uploading(sent: 0, total: length))
      (step, last) = try await create()
    } else {
      (step, last) = try await head()
    }
    var unsettled = 0
    var progressed: Int64 = -1
    // Whether `last` answered a `HEAD`: its completion is proven by the record it names.
    var asked = run.record.uploadURL != nil && !announced
    while true {
      switch step {
      case .complete:
        return try proven(last, byHead: asked)
      case .send(let from):
        if !announced {
          announced = true
          run.started(at: from)
          if from > 0 { onResume(from, length) }
          onState(.uploading(sent: from, total: length))
        }
        if from > progressed {
          progressed = from
          unsettled = 0
        }
        try run.confirmed(from)
        (step, last) = try await append(from: from)
        asked = false
      case .resync, .resendChunk:
        unsettled += 1
        if unsettled > 3 {
          throw Tus.anomaly("ietf_offset_unsettled", last.0, "kept changing where it stands")
        }
        (step, last) = try await head()
        asked = true
      case .restart:
        guard try run.restart() else {
          throw CourierError(
            .business, status: last.0.status.code, code: "upload_gone",
            serverMessage: "The server lost the upload twice; it was not sent.")
        }
        announced = true
        run.started(at: 0)
        onState(.uploading(sent: 0, total: length))
        (step, last) = try await create()
        asked = false
      case .fail(let error):
        throw error
      }
    }
  }

  /// The delivery proof of a completing answer (decision 0414): the target's own proof in
  /// the body, or, when a `HEAD` found the upload complete, the record it names
  /// (`IETFUpload.afterHead` checked it).
  private func proven(_ answer: (HTTPResponse, ResponseBody), byHead: Bool) throws -> (
    HTTPResponse, ResponseBody
  ) {
    if byHead { return answer }
    let (response, body) = answer
    if let failure = ResponseClassifier.classify(response, body: body.bytes) { throw failure }
    try DeliveryProof.upload(
      response, body: body.bytes, confirmation: confirmation, fileSize: fileSize)
    return answer
  }

  /// The interim answers' observer: the `104`'s address saved before a byte of content is
  /// read, and each progress `104`'s offset noted.
  private func hearing() -> @Sendable (HTTPResponse) -> Void {
    let run = run
    let target = target
    return { interim in
      guard let said = IETFUpload.resumption(interim, target: target) else { return }
      if let location = said.location, run.record.uploadURL == nil {
        try? run.update { $0.uploadURL = location.absoluteString }
      }
      if let offset = said.offset, run.record.uploadURL != nil { try? run.confirmed(offset) }
    }
  }

  private func create() async throws -> Answered {
    let limit = pieceLimit.value
    let piece = min(length, limit ?? length)
    let complete = piece == length
    var http = try HTTPRequest(
      checking: target, method: .post,
      headerFields: [
        .accept: "application/json", .idempotencyKey: run.record.idempotencyKey,
        .contentType: contentType,
      ])
    http.headerFields.append(
      contentsOf: IETFUpload.creationFields(
        complete: complete, length: complete ? nil : length, digest: digest))
    var options = self.options.boundedByProgress()
    options.progress = progress(from: 0)
    options.informational = hearing()
    let answer = try await transport.send(
      http, body: .segments(segments.slice(from: 0, count: piece)),
      options: options)
    let response = answer.0
    if run.record.uploadURL == nil,
      let location = response.headerFields[.location].flatMap({
        URL(string: $0, relativeTo: target)?.absoluteURL
      }), IETFUpload.isComplete(response) != nil
    {
      // The draft's answer without a 104 heard (a transport that hides them).
      try run.update { $0.uploadURL = location.absoluteString }
    }
    noteLimits(response)
    guard run.record.uploadURL != nil else {
      if response.status.code == 413, limit == nil, pieceLimit.value != nil {
        // Over the draft server's append limit, refused before it created anything: a first
        // piece within the limit, then appends.
        return try await create()
      }
      // A plain upload: the target answered it as a whole.
      return (.complete(recordID: nil), answer)
    }
    return (
      IETFUpload.afterWrite(response, body: answer.1.bytes, end: piece, length: length), answer
    )
  }

  private func head() async throws -> Answered {
    let http = try HTTPRequest(
      checking: try uploadURL(), method: .head,
      headerFields: [.uploadDraftInteropVersion: String(IETFUpload.interopVersion)])
    let answer = try await transport.send(http, body: nil, options: options)
    noteLimits(answer.0)
    let step = IETFUpload.afterHead(
      answer.0, body: answer.1.bytes, length: length, confirmation: confirmation)
    return (step, answer)
  }

  private func append(from: Int64) async throws -> Answered {
    let limit = pieceLimit.value
    let piece = min(length - from, limit ?? length)
    let end = from + piece
    let http = try HTTPRequest(
      checking: try uploadURL(), method: .patch,
      headerFields: [
        .accept: "application/json",
        .uploadDraftInteropVersion: String(IETFUpload.interopVersion),
        .uploadOffset: String(from), .uploadComplete: end == length ? "?1" : "?0",
        .contentType: IETFUpload.partialUploadType,
      ])
    var options = self.options.boundedByProgress()
    options.progress = progress(from: from)
    options.informational = hearing()
    let answer = try await transport.send(
      http, body: .segments(segments.slice(from: from, count: piece)),
      options: options)
    if answer.0.status.code == 413 {
      // Smaller pieces: the server's limit when it names one below this piece, else half.
      let named = IETFUpload.Limits(answer.0.headerFields[.uploadLimit]).maxAppendSize
      let smaller = named.flatMap { $0 > 0 && $0 < piece ? $0 : nil } ?? piece / 2
      pieceLimit.value = max(1, smaller)
    } else {
      noteLimits(answer.0)
    }
    return (IETFUpload.afterWrite(answer.0, body: answer.1.bytes, end: end, length: length), answer)
  }

  /// Takes the server's `max-append-size` when it is below the piece limit so far.
  private func noteLimits(_ response: HTTPResponse) {
    guard let most = IETFUpload.Limits(response.headerFields[.uploadLimit]).maxAppendSize,
      most > 0
    else { return }
    pieceLimit.lower(to: most)
  }

  private func uploadURL() throws -> URL {
    guard let text = run.record.uploadURL, let url = URL(string: text) else {
      throw CourierError(.unexpected, underlying: "no upload URL")
    }
    return url
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

extension [BodySegment] {
  /// The `count` bytes of these segments from `offset`, as segments.
  /// - Parameters:
  ///   - offset: the first byte.
  ///   - count: how many bytes.
  /// - Returns: the slice.
  func slice(from offset: Int64, count: Int64) -> [BodySegment] {
    var result: [BodySegment] = []
    var skip = offset
    var left = count
    for segment in self where left > 0 {
      let length = segment.length
      if skip >= length {
        skip -= length
        continue
      }
      let take = Swift.min(length - skip, left)
      switch segment.contents {
      case .bytes(let data):
        let start = data.startIndex + Int(skip)
        result.append(.bytes(Data(data[start..<start + Int(take)])))
      case .file(let url, let base, _):
        result.append(.file(url, offset: base + skip, length: take))
      }
      left -= take
      skip = 0
    }
    return result
  }
}

/// The most bytes one request of an upload may carry, once the server said or a 413 showed.
final class PieceLimit: Sendable {
  private let state = Mutex<Int64?>(nil)

  /// The limit; nil for none known.
  var value: Int64? {
    get { state.withLock { $0 } }
    set { state.withLock { $0 = newValue } }
  }

  /// Lowers the limit to `most` unless it is lower already.
  func lower(to most: Int64) { state.withLock { $0 = Swift.min($0 ?? most, most) } }
}
