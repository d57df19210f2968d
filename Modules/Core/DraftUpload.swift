import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes

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
  /// The first append of a run that knows no confirmed rate (decision 2704).
  var firstPiece: Int64 = UploadPieces.defaultFirst
  /// The interop version a creation names first (decision 2707); a refused one is
  /// negotiated down once, unless `pinned`.
  var interop: IETFInterop = .current
  /// Whether `interop` was configured (`ietf_interop_version`, `--interop`): then no other
  /// version is tried.
  var pinned = false

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
    /// The `Idempotency-Key` the upload was created under.
    var idempotencyKey: String
    /// The interop version the upload was sent at.
    var interop: IETFInterop
  }

  /// Sends `layout` to `target` as described above.
  /// - Parameters:
  ///   - layout: the form, laid out under its boundary.
  ///   - target: the target resource (`/photos`).
  ///   - record: what is kept about the upload (`idempotencyKey`), resuming the one saved
  ///     under `key` when it describes the same bytes.
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
    let segments = try FormUpload.bodySegments(layout)
    // The whole representation's digest, when reading it once more costs little: the server
    // checks the stored upload against it at completion.
    let digest = layout.contentLength <= Self.digestLimit ? try Self.sha256(segments) : nil
    let strategy = DraftStrategy(
      target: target, segments: segments, digest: digest, contentType: layout.contentType,
      length: layout.contentLength, confirmation: confirmation, fileSize: fileSize,
      interop: interop, pinned: pinned)
    let transfer = ResumableTransfer(
      transport: transport, executor: executor, store: store, options: options,
      progressGranularity: progressGranularity, firstPiece: firstPiece)
    let outcome = try await transfer.send(
      strategy, record: record, key: key, givenKey: nil, length: layout.contentLength,
      onState: onState, onResume: onResume)
    return Answer(
      response: outcome.answer.0, body: outcome.answer.1, attempts: outcome.attempts,
      bodyLength: layout.contentLength,
      uploadURL: outcome.record.uploadURL.flatMap(URL.init(string:)),
      resumedAt: outcome.resumedAt, idempotencyKey: outcome.record.idempotencyKey,
      interop: IETFInterop.saved(outcome.record.interopVersion))
  }
}

/// The IETF draft's exchanges for `ResumableTransfer` (decision 2702): the form posted whole
/// with `Upload-Complete: ?1` (a plain upload where the draft is not spoken), its `104` heard,
/// then `HEAD` and appends (`PATCH`, `application/partial-upload`) sized by the confirmed rate.
struct DraftStrategy: ResumableStrategy {
  let target: URL
  let segments: [BodySegment]
  /// The whole representation's SHA-256, for `Repr-Digest`; nil when not computed.
  let digest: [UInt8]?
  let contentType: String
  let length: Int64
  let confirmation: DeliveryProof.UploadConfirmation
  let fileSize: Int64?
  /// The version a creation names first (``DraftUpload/interop``).
  let interop: IETFInterop
  /// Whether no other version may be tried.
  let pinned: Bool

  var codePrefix: String { "ietf" }
  var savesBeforeCreation: Bool { false }

  func cancel(_ url: URL, of saved: ResumableUpload) throws -> HTTPRequest {
    try Self.deletion(url, interop: .saved(saved.interopVersion))
  }

  /// The draft's `DELETE` of the upload resource at `url` (a cancellation).
  /// - Parameters:
  ///   - url: the upload resource.
  ///   - interop: the version the upload was created at.
  /// - Returns: the request.
  static func deletion(_ url: URL, interop: IETFInterop) throws -> HTTPRequest {
    try HTTPRequest(
      checking: url, method: .delete,
      headerFields: [.uploadDraftInteropVersion: interop.description])
  }

  /// The version the upload's requests name: the one its creation named (kept in its record,
  /// decision 2708).
  private func spoken(_ run: ResumableRun) -> IETFInterop { .saved(run.record.interopVersion) }

  func prepare(_ context: ResumableContext) async throws {}

  /// The delivery proof of a completing answer (decision 0414): the target's own proof in
  /// the body, or, when a `HEAD` found the upload complete, the record it names
  /// (`IETFUpload.afterHead` checked it).
  func proven(_ answer: (HTTPResponse, ResponseBody), after exchange: Tus.Exchange) throws -> (
    HTTPResponse, ResponseBody
  ) {
    if exchange == .head { return answer }
    let (response, body) = answer
    if let failure = ResponseClassifier.classify(response, body: body.bytes) { throw failure }
    try DeliveryProof.upload(
      response, body: body.bytes, confirmation: confirmation, fileSize: fileSize)
    return answer
  }

  /// The interim answers' observer: the `104`'s address saved before a byte of content is
  /// read, and each progress `104`'s offset noted.
  private func hearing(_ run: ResumableRun) -> @Sendable (HTTPResponse) -> Void {
    let target = target
    return { interim in
      guard
        let said = IETFUpload.resumption(interim, target: target, interop: spoken(run))
      else { return }
      if let location = said.location, run.record.uploadURL == nil {
        try? run.update { $0.uploadURL = location.absoluteString }
      }
      if let offset = said.offset, run.record.uploadURL != nil { try? run.confirmed(offset) }
    }
  }

  func create(_ context: ResumableContext) async throws -> Answered {
    let run = context.run
    // A creation names the configured version when pinned, else the one this upload settled
    // on (a negotiation in an earlier attempt or run), else the default.
    let version = pinned ? interop : IETFInterop(run.record.interopVersion ?? 0) ?? interop
    run.note { $0.interopVersion = version.number }
    return try await create(context, refused: [])
  }

  /// The creation at the record's version; `refused` lists the versions this run saw refused.
  private func create(_ context: ResumableContext, refused: [IETFInterop]) async throws
    -> Answered
  {
    let run = context.run
    let version = spoken(run)
    let limit = run.serverLimit
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
        complete: complete, length: complete ? nil : length, digest: digest, interop: version))
    var options = context.options.boundedByProgress()
    options.progress = context.progress(from: 0)
    options.informational = hearing(run)
    let answer = try await context.transport.send(
      http, body: .segments(segments.slice(from: 0, count: piece)), options: options)
    let response = answer.0
    if run.record.uploadURL == nil,
      let location = response.headerFields[.location].flatMap({
        URL(string: $0, relativeTo: target)?.absoluteURL
      }), version.namesCompleteness(response)
    {
      // The draft's answer without a 104 heard (a transport that hides them).
      try run.update { $0.uploadURL = location.absoluteString }
    }
    context.noteLimits(response)
    guard run.record.uploadURL != nil else {
      if response.status.code == 413, limit == nil, run.serverLimit != nil {
        // Over the draft server's append limit, refused before it created anything: a first
        // piece within the limit, then appends.
        return try await create(context, refused: refused)
      }
      if let listed = IETFInterop.refusal(response, body: answer.1.bytes, sent: version) {
        // The version refused before anything was created (decision 2708): once, the
        // highest both speak.
        let tried = refused + [version]
        guard !pinned, refused.isEmpty, let next = IETFInterop.shared(listed, refused: version)
        else {
          throw IETFInterop.unsupported(
            listed, refused: tried, pinned: pinned, status: response.status.code)
        }
        run.note { $0.interopVersion = next.number }
        return try await create(context, refused: tried)
      }
      // A plain upload: the target answered it as a whole.
      return (.complete(recordID: nil), answer)
    }
    return (
      IETFUpload.afterWrite(response, body: answer.1.bytes, end: piece, length: length), answer
    )
  }

  func head(_ context: ResumableContext) async throws -> Answered {
    let version = spoken(context.run)
    let http = try HTTPRequest(
      checking: try context.uploadURL(), method: .head,
      headerFields: [.uploadDraftInteropVersion: version.description])
    let answer = try await context.transport.send(http, body: nil, options: context.options)
    context.noteLimits(answer.0)
    let step = IETFUpload.afterHead(
      answer.0, body: answer.1.bytes, length: length, confirmation: confirmation,
      interop: version)
    return (step, answer)
  }

  func append(_ context: ResumableContext, from: Int64, piece: Int64) async throws -> Answered {
    let end = from + piece
    let version = spoken(context.run)
    var http = try HTTPRequest(
      checking: try context.uploadURL(), method: .patch,
      headerFields: [
        .accept: "application/json", .uploadDraftInteropVersion: version.description,
        .uploadOffset: String(from), .contentType: version.appendType,
      ])
    http.headerFields.append(version.completeness(end == length))
    var options = context.options.boundedByProgress()
    options.progress = context.progress(from: from)
    options.informational = hearing(context.run)
    let answer = try await context.transport.send(
      http, body: .segments(segments.slice(from: from, count: piece)), options: options)
    if answer.0.status.code != 413 { context.noteLimits(answer.0) }
    return (IETFUpload.afterWrite(answer.0, body: answer.1.bytes, end: end, length: length), answer)
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
