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
    let transfer = TusExchange(
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
