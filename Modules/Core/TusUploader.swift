import CourierDomain
import CourierPorts
import CourierSystem
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

/// The resumable upload use case, tus 1.0.0 (decision 1301): compress once (the same rules as
/// `Uploader`), create the upload with one `Idempotency-Key` for its whole life, send the file
/// in chunks with `PATCH` (each with its SHA-256 when the server offers checksums), and after
/// any interruption ask the server (`HEAD`) where it stopped and send only the rest. The
/// upload's record (URL, key, file identity, confirmed offset) is saved in `store` so a new
/// process resumes too; a changed file starts over. Memory stays flat: chunks are file ranges
/// read while sending.
///
/// `transport` must make one attempt per call (no retry step): this type retries itself,
/// through `executor`, and each retry resumes with a `HEAD` instead of repeating a `PATCH`.
package struct TusUploader<C: Clock>: Sendable where C.Duration == Duration {
  /// The transport, one attempt per call (auth, middlewares and logging around an adapter).
  package let transport: any Transport
  /// The retry executor: its policy decides whether an interrupted upload is resumed.
  package let executor: RetryExecutor<C>
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Where upload records survive the process; nil to keep them in memory only.
  package let store: (any ResumableUploadStore)?
  /// Per-request options (the deadline of one request).
  package let options: TransportOptions
  /// The bytes of the first `PATCH`; the next ones last about a quarter of a second each at
  /// the rate the link gives (`Tus.nextChunk`), between 1 MiB (or this, when smaller) and
  /// 256 MiB (or this, when larger).
  package let chunkSize: Int64
  /// Where the compressed image is written.
  package let temporaryDirectory: URL
  /// The least change in bytes sent that is published as a new `uploading` state.
  package let progressGranularity: Int64
  /// Computes the chunks' checksums and, where a file's metadata cannot vouch for its bytes,
  /// their identity (decision 1303).
  package let hasher: any FileHasher
  /// The wall clock a file's change time is compared with (``ResumableUpload/FileIdentity/isRacy(checkedAt:)``).
  package let wallClock: any WallClock

  /// The default bytes per `PATCH`: 4 MiB. A checksummed chunk cut short is sent again
  /// whole, so this bounds what an interruption costs; larger chunks gain nothing measurable.
  package static var defaultChunkSize: Int64 { 4 * 1024 * 1024 }

  /// Creates an tus.
  /// - Parameters:
  ///   - transport: one attempt per call.
  ///   - executor: the retry executor.
  ///   - compressor: the image compressor.
  ///   - store: where records survive the process; nil for none.
  ///   - options: per-request options.
  ///   - chunkSize: bytes per `PATCH` (at least 1).
  ///   - temporaryDirectory: where the compressed image goes.
  ///   - progressGranularity: the least progress change published.
  ///   - hasher: the SHA-256 of file ranges (the portable one by default).
  ///   - wallClock: the wall clock.
  package init(
    transport: any Transport, executor: RetryExecutor<C>, compressor: any ImageCompressor,
    store: (any ResumableUploadStore)? = nil, options: TransportOptions = TransportOptions(),
    chunkSize: Int64 = defaultChunkSize,
    temporaryDirectory: URL = FileManager.default.temporaryDirectory,
    progressGranularity: Int64 = 64 * 1024, hasher: any FileHasher = SwiftFileHasher(),
    wallClock: any WallClock = SystemWallClock()
  ) {
    self.hasher = hasher
    self.wallClock = wallClock
    self.transport = transport
    self.executor = executor
    self.compressor = compressor
    self.store = store
    self.options = options
    self.chunkSize = max(1, chunkSize)
    self.temporaryDirectory = temporaryDirectory
    self.progressGranularity = max(0, progressGranularity)
  }

  /// Starts an upload and publishes its states, like `Uploader.states(for:)`: the last
  /// element is `succeeded`, or the stream throws the `CourierError` that ended the upload.
  /// - Parameter request: what to upload; `target` is the tus endpoint (creation URL).
  /// - Returns: the states, in order.
  package func states(for request: UploadRequest) -> AsyncThrowingStream<UploadState, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: UploadState.self)
    let task = Task {
      do {
        let result = try await perform(request) { state in
          if !state.isFinal { continuation.yield(state) }
        }
        continuation.yield(.succeeded(result))
        continuation.finish()
      } catch {
        continuation.finish(throwing: CourierError.wrapping(error))
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Runs a resumable upload in the caller's task.
  /// - Parameters:
  ///   - request: what to upload; `target` is the tus endpoint, `confirmation` `.record`
  ///     requires the server to name the stored record (`Courier-Photo-Id`).
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`; a resumed
  ///     upload's first `uploading` is at the offset the server held, never at 0.
  ///   - onResume: told `(offset, total)` when an attempt goes on from bytes the server
  ///     already held (after a `HEAD`), before that `uploading`.
  /// - Returns: the result; its response is the answer that proved completion.
  /// - Throws: `CourierError`: `fileUnavailable`, `invalidInput`, `invalidResponse` for an
  ///   answer that would risk a damaged file (an impossible offset), the classified refusal,
  ///   the last transient failure after the retries, `cancelled`.
  package func perform(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in }
  ) async throws -> UploadResult {
    let preparation = UploadPreparation(
      compressor: compressor, temporaryDirectory: temporaryDirectory)
    return try await preparation.run(request, onState: onState) { prepared, _ in
      let path = request.file.standardizedFileURL.path
      let endpoint = request.target.absoluteString
      let key = ResumableUpload.storageKey(endpoint: endpoint, file: path)
      // The bytes' identity (decision 1303): a file sent as it is, by what the file system
      // says of it, read before any byte is; the compressed copy (small), or a file changed
      // too recently for its times to tell, by its SHA-256 as well.
      let derived = prepared.verdict.send == .compressed
      let original = Self.identity(ofFile: path)
      let identity = derived ? nil : original
      let checkedAt = Self.nanoseconds(wallClock.now())
      let hashed = ResumableUpload.needsDigest(
        derived: derived, identity: identity, checkedAt: checkedAt, saved: store?.load(key))
      let fresh = ResumableUpload(
        endpoint: endpoint, file: path, fileSize: prepared.originalSize,
        fileModified: original?.modified ?? 0,
        sha256: hashed
          ? SHA256.hex(try hasher.sha256(of: prepared.url, offset: 0, length: prepared.length))
          : "",
        length: prepared.length,
        idempotencyKey: request.idempotencyKey ?? UUID().uuidString.lowercased(),
        fileIdentity: identity)
      return try await transfer.send(
        prepared, request: request, record: fresh, key: key, onState: onState,
        onResume: onResume)
    }
  }

  /// The file's identity (`stat`, following a symbolic link as the upload's open does); nil
  /// when it cannot be read.
  static func identity(ofFile path: String) -> ResumableUpload.FileIdentity? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    #if canImport(Darwin)
      let modified = info.st_mtimespec
      let changed = info.st_ctimespec
    #else
      let modified = info.st_mtim
      let changed = info.st_ctim
    #endif
    return ResumableUpload.FileIdentity(
      device: UInt64(truncatingIfNeeded: info.st_dev),
      inode: UInt64(truncatingIfNeeded: info.st_ino), size: Int64(info.st_size),
      modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
      changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec))
  }

  static func nanoseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1_000_000_000).rounded(.down))
  }

  /// The protocol part, with this uploader's transport, retries, store and chunk size.
  var transfer: TusTransfer<C> {
    TusTransfer(
      transport: transport, executor: executor, store: store, options: options,
      chunkSize: chunkSize, progressGranularity: progressGranularity, hasher: hasher)
  }
}

/// The tus exchange of prepared bytes (decision 1301): the saved record resumed (or the old
/// upload freed when the bytes changed), `OPTIONS`, then attempts under the retry executor,
/// each a creation or a `HEAD` followed by `PATCH`es from the server's offset. Shared by
/// `TusUploader` and the replay of queued uploads.
struct TusTransfer<C: Clock>: Sendable where C.Duration == Duration {
  let transport: any Transport
  let executor: RetryExecutor<C>
  let store: (any ResumableUploadStore)?
  let options: TransportOptions
  let chunkSize: Int64
  let progressGranularity: Int64
  let hasher: any FileHasher

  /// The smallest `PATCH`: 1 MiB, or the configured size when smaller.
  var minimumChunk: Int64 { min(chunkSize, 1 << 20) }
  /// The largest `PATCH`: 256 MiB, or the configured size when larger (a quarter second of a 1 GB/s link).
  var maximumChunk: Int64 { max(chunkSize, 256 << 20) }

  /// Sends `prepared` to `request.target`, resuming the record saved under `key` when it
  /// describes the same bytes (`fresh.resumes`).
  ///
  /// The whole upload is one call (decision 2203): one `courier.request.id` for its requests,
  /// `courier.attempt` for each attempt's, and one count in `courier_requests_total` when it
  /// ends; the bytes a resumed attempt finds on the server count in `courier_bytes_resumed_total`.
  func send(
    _ prepared: PreparedUpload, request: UploadRequest, record fresh: ResumableUpload,
    key: String, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void
  ) async throws -> UploadResult {
    let call = options.identifyingCall()
    let metrics = executor.metrics
    let clock = executor.clock
    let start = metrics.isEnabled ? clock.now : nil
    do {
      let result = try await send(
        prepared, request: request, record: fresh, key: key, call: call, onState: onState,
        onResume: onResume)
      if let start { metrics.requestEnded(failure: nil, after: start.duration(to: clock.now)) }
      return result
    } catch {
      if let start {
        metrics.requestEnded(
          failure: CourierError.wrapping(error), after: start.duration(to: clock.now))
      }
      throw error
    }
  }

  private func send(
    _ prepared: PreparedUpload, request: UploadRequest, record fresh: ResumableUpload,
    key: String, call: TransportOptions, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void
  ) async throws -> UploadResult {
    var record = fresh
    if let saved = store?.load(key) {
      if saved.resumes(fresh) {
        record = saved
        // No upload was created under the saved key, and the caller names the key now (a
        // queued upload put back in the queue after a refusal gets a new one, decision 0412).
        if saved.uploadURL == nil, let given = request.idempotencyKey {
          record.idempotencyKey = given
        }
      } else if let old = saved.uploadURL.flatMap(URL.init(string:)),
        let delete = try? HTTPRequest(
          checking: old, method: .delete, headerFields: [.tusResumable: Tus.version])
      {
        // The file changed: the old upload can never complete; free it (best effort).
        _ = try? await transport.send(delete, body: nil, options: call)
      }
    }
    let run = TusRun(record: record, key: key, store: store, chunk: chunkSize)
    try run.save()
    let part = prepared.part
    let title = request.title ?? request.file.lastPathComponent
    var pairs: [(key: String, value: String)] = [
      ("title", title), ("filename", part.filename ?? request.file.lastPathComponent),
      ("filetype", part.contentType ?? "application/octet-stream"),
    ]
    for field in request.fields {
      if case .text(let value) = field.content { pairs.append((field.name, value)) }
    }
    let length = prepared.length
    let transfer = Transfer(
      tus: self, options: call, run: run, request: request, file: prepared.url, length: length,
      metadata: Tus.metadata(pairs), onState: onState, onResume: onResume,
      throttle: ProgressThrottle(granularity: progressGranularity))
    let callObserver = options.onRetry
    let (attempts, response) = try await executor.run(
      safeToRepeat: true, logger: call.logger,
      onEvent: { event in
        callObserver?(event)
        if case .retrying(let attempt, let maxAttempts, let delay, let error) = event {
          onState(
            .retrying(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: error))
        }
      }
    ) { attempt in
      (attempt, try await transfer.attempt(attempt))
    }
    run.finish()
    var result = UploadResult(
      response: response.0, responseBody: response.1, attempts: attempts,
      verdict: prepared.verdict, bodyLength: length, idempotencyKey: run.record.idempotencyKey)
    result.uploadURL = run.record.uploadURL.flatMap(URL.init(string:))
    result.recordID = response.0.headerFields[.courierPhotoID]
    result.resumedAt = run.resumedAt
    return result
  }

}

/// One upload's record while it runs, saved at every change that matters.
final class TusRun: Sendable {
  private struct State {
    var record: ResumableUpload
    var restarted = false
    var resumedAt: Int64?
    /// The size of the next `PATCH` (`Tus.nextChunk`).
    var chunk: Int64
    /// When the record was last saved.
    var savedAt = ContinuousClock.now
    /// What the server offers, once its `OPTIONS` was answered in this run.
    var capabilities: Tus.Capabilities?
  }
  private let state: Mutex<State>
  let key: String
  let store: (any ResumableUploadStore)?

  init(record: ResumableUpload, key: String, store: (any ResumableUploadStore)?, chunk: Int64) {
    state = Mutex(State(record: record, chunk: chunk))
    self.key = key
    self.store = store
  }

  var record: ResumableUpload { state.withLock { $0.record } }
  var chunk: Int64 { state.withLock { $0.chunk } }
  /// What the server offers, once known.
  var capabilities: Tus.Capabilities? {
    get { state.withLock { $0.capabilities } }
    set { state.withLock { $0.capabilities = newValue } }
  }

  /// A `PATCH` failed: the next one is a quarter of its size, not below `minimum`.
  func shrink(minimum: Int64) {
    state.withLock { $0.chunk = max(minimum, $0.chunk / 4) }
  }

  /// Sizes the next `PATCH` by how the last one went.
  func adapt(sent: Int64, took: Duration, minimum: Int64, maximum: Int64) {
    state.withLock {
      $0.chunk = Tus.nextChunk(
        current: $0.chunk, sent: sent, took: took, minimum: minimum, maximum: maximum)
    }
  }
  var resumedAt: Int64? { state.withLock { $0.resumedAt } }

  func save() throws {
    guard let store else { return }
    do {
      try store.save(record, as: key)
    } catch {
      throw CourierError(
        .localStore, code: "upload_state_unwritable",
        serverMessage: "The upload's resume state couldn't be saved in the data folder.",
        underlying: String(describing: error))
    }
  }

  func update(_ change: (inout ResumableUpload) -> Void) throws {
    state.withLock { change(&$0.record) }
    try save()
    noteSaved()
  }

  /// Notes a confirmed offset; saves it at most every 2 s. The saved offset is only where a
  /// `HEAD` is expected to be at least (and what `courier outbox` shows): the server's answer
  /// is the truth, so a saved offset behind it costs nothing, while a durable save per chunk
  /// (two fsyncs) cost a fast link more than half its throughput.
  func confirmed(_ offset: Int64) throws {
    let due = state.withLock { state -> Bool in
      state.record.confirmedOffset = offset
      return state.savedAt.duration(to: .now) >= .seconds(2)
    }
    if due {
      try save()
      noteSaved()
    }
  }

  private func noteSaved() {
    state.withLock { $0.savedAt = .now }
  }

  /// Notes where an attempt started sending: the last one counts, so the result says where
  /// the transfer that completed the upload resumed.
  func started(at offset: Int64) {
    state.withLock { $0.resumedAt = offset }
  }

  /// A new upload, once: false when one was already started over.
  func restart() throws -> Bool {
    let first = state.withLock { state -> Bool in
      guard !state.restarted else { return false }
      state.restarted = true
      state.record.uploadURL = nil
      state.record.confirmedOffset = 0
      state.record.idempotencyKey = UUID().uuidString.lowercased()
      state.resumedAt = nil
      return true
    }
    if first { try save() }
    return first
  }

  func finish() { store?.remove(key) }
}

/// The protocol exchange of one upload: each `attempt()` starts by learning where the server
/// stands (a creation, or a `HEAD`) and sends the rest.
private struct Transfer<C: Clock>: Sendable where C.Duration == Duration {
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
