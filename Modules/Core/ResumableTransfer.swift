import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An answer and the step it leads to.
typealias Answered = (step: Tus.Step, answer: (HTTPResponse, ResponseBody))

/// What one resumable protocol does (decision 2704): tus 1.0.0 (`TusStrategy`) or the IETF
/// draft (`DraftStrategy`). The attempts, the retries, the record, the pieces' sizes and the
/// progress are `ResumableTransfer`'s, the same for both.
protocol ResumableStrategy: Sendable {
  /// The prefix of the codes of this protocol's anomalies (`tus`, `ietf`).
  var codePrefix: String { get }
  /// Whether the record is saved before the creation (tus: its key must survive a kill) or
  /// only once the server offered resumption (the draft: a plain upload leaves nothing).
  var savesBeforeCreation: Bool { get }
  /// The request that cancels an upload the process no longer needs (`DELETE`).
  /// - Parameters:
  ///   - url: the upload's address.
  ///   - saved: its record (the draft's version it was created at).
  /// - Returns: the request.
  func cancel(_ url: URL, of saved: ResumableUpload) throws -> HTTPRequest
  /// What the attempt learns before its first exchange (tus's `OPTIONS`, once per run).
  func prepare(_ context: ResumableContext) async throws
  /// Creates the upload (with the first bytes where the protocol sends them).
  func create(_ context: ResumableContext) async throws -> Answered
  /// Asks where the upload stands.
  func head(_ context: ResumableContext) async throws -> Answered
  /// Sends `piece` bytes from `from`.
  func append(_ context: ResumableContext, from: Int64, piece: Int64) async throws -> Answered
  /// The answer that proves the delivery, or the error that it does not.
  /// - Parameters:
  ///   - answer: the completing answer.
  ///   - exchange: the exchange it answered.
  func proven(_ answer: (HTTPResponse, ResponseBody), after exchange: Tus.Exchange) throws
    -> (HTTPResponse, ResponseBody)
}

/// The resumable transfer both protocols share (decisions 1301, 2702, 2704): the saved record
/// resumed (or the old upload cancelled when the bytes changed), then attempts under the retry
/// executor, each a creation or a `HEAD` followed by pieces from the server's offset, sized by
/// the rate the server confirms. The whole upload is one call (decision 2203): one
/// `courier.request.id`, `courier.attempt` for each attempt's requests, one count in
/// `courier_requests_total` when it ends.
struct ResumableTransfer<C: Clock>: Sendable where C.Duration == Duration {
  let transport: any Transport
  let executor: RetryExecutor<C>
  let store: (any ResumableUploadStore)?
  let options: TransportOptions
  let progressGranularity: Int64
  /// The first piece of a run when no rate was confirmed before.
  let firstPiece: Int64

  /// The outcome of a transfer.
  struct Outcome {
    /// The answer that proved the delivery.
    var answer: (HTTPResponse, ResponseBody)
    /// The attempts made.
    var attempts: Int
    /// The record at the end.
    var record: ResumableUpload
    /// Where the attempt that completed the upload started sending.
    var resumedAt: Int64?
  }

  /// Sends `length` bytes with `strategy`, resuming the record saved under `key` when it
  /// describes the same bytes as `fresh`.
  /// - Parameters:
  ///   - strategy: the protocol.
  ///   - fresh: the record made for this upload.
  ///   - key: its key in `store`.
  ///   - givenKey: the caller's `Idempotency-Key`, adopted by a saved record under which no
  ///     upload was created yet (a queued upload put back after a refusal, decision 0412).
  ///   - length: the bytes to send.
  ///   - onState: told `uploading` and `retrying`.
  ///   - onResume: told `(offset, total)` when an attempt goes on from bytes the server held.
  /// - Returns: the outcome.
  func send(
    _ strategy: some ResumableStrategy, record fresh: ResumableUpload, key: String,
    givenKey: String?, length: Int64, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (Int64, Int64) -> Void
  ) async throws -> Outcome {
    let call = options.identifyingCall()
    let metrics = executor.metrics
    let clock = executor.clock
    let start = metrics.isEnabled ? clock.now : nil
    do {
      let outcome = try await send(
        strategy, record: fresh, key: key, givenKey: givenKey, length: length, call: call,
        onState: onState, onResume: onResume)
      if let start { metrics.requestEnded(failure: nil, after: start.duration(to: clock.now)) }
      return outcome
    } catch {
      if let start {
        metrics.requestEnded(
          failure: CourierError.wrapping(error), after: start.duration(to: clock.now))
      }
      throw error
    }
  }

  private func send(
    _ strategy: some ResumableStrategy, record fresh: ResumableUpload, key: String,
    givenKey: String?, length: Int64, call: TransportOptions,
    onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (Int64, Int64) -> Void
  ) async throws -> Outcome {
    var record = fresh
    if let saved = store?.load(key) {
      if saved.resumes(fresh) {
        record = saved
        // No upload was created under the saved key, and the caller names the key now.
        if saved.uploadURL == nil, let givenKey { record.idempotencyKey = givenKey }
      } else {
        if let old = saved.uploadURL.flatMap(URL.init(string:)),
          let cancel = try? strategy.cancel(old, of: saved)
        {
          // The bytes changed: the old upload can never complete; free it (best effort).
          _ = try? await transport.send(cancel, body: nil, options: call)
        }
        store?.remove(key)
      }
    }
    let run = ResumableRun(record: record, key: key, store: store, firstPiece: firstPiece)
    if strategy.savesBeforeCreation { try run.save() }
    let exchange = ResumableExchange(
      strategy: strategy, executor: executor, onResume: onResume,
      context: ResumableContext(
        transport: transport, options: call, run: run, length: length, onState: onState,
        throttle: ProgressThrottle(granularity: progressGranularity)))
    let callObserver = options.onRetry
    let (attempts, answer) = try await executor.run(
      safeToRepeat: true, logger: call.logger,
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
    return Outcome(
      answer: answer, attempts: attempts, record: run.record, resumedAt: run.resumedAt)
  }
}

/// One upload's exchanges: each `attempt` starts by learning where the server stands (a
/// creation, or a `HEAD`) and sends the rest in pieces.
struct ResumableExchange<C: Clock>: Sendable where C.Duration == Duration {
  let strategy: any ResumableStrategy
  let executor: RetryExecutor<C>
  let onResume: @Sendable (Int64, Int64) -> Void
  /// What the strategy's requests need; its options are the call's, then the attempt's.
  var context: ResumableContext

  var run: ResumableRun { context.run }
  var length: Int64 { context.length }

  /// One attempt, to the answer that proved completion.
  /// - Parameter number: the attempt, from 1.
  func attempt(_ number: Int) async throws -> (HTTPResponse, ResponseBody) {
    var this = self
    this.context.options = context.options.forAttempt(number)
    return try await this.attempt()
  }

  private func attempt() async throws -> (HTTPResponse, ResponseBody) {
    context.throttle.reset()
    try await strategy.prepare(context)
    let creating = run.record.uploadURL == nil
    // A creation in this attempt sends from byte 0 itself: its offset afterwards is
    // progress, not a resume. A HEAD's offset is what the server held already.
    var announced = creating
    if creating { begin(at: 0) }
    var (step, last) =
      creating ? try await strategy.create(context) : try await strategy.head(context)
    // Which exchange gave `step`: a HEAD's offset is where to send from, not a confirmation.
    var exchange: Tus.Exchange = creating ? .creation : .head
    var unsettled = 0
    var progressed: Int64 = -1
    while true {
      switch step {
      case .complete:
        return try strategy.proven(last, after: exchange)
      case .send(let from):
        try run.confirmed(
          Tus.confirmedOffset(after: step, of: exchange, confirmed: run.record.confirmedOffset))
        if !announced {
          // Progress starts at what the server holds, never at 0 for a resumed upload.
          announced = true
          run.started(at: from)
          if from > 0 {
            executor.metrics.resumed(bytes: from)
            onResume(from, length)
          }
          context.onState(.uploading(sent: from, total: length))
        }
        if from > progressed {
          progressed = from
          unsettled = 0
        }
        (step, last) = try await append(from: from)
        exchange = .patch
      case .resync, .resendChunk:
        if last.0.status.code != 413 {
          // A 413 lowered the limit (`append`): that is a change, not a loop.
          unsettled += 1
        }
        if unsettled > 3 {
          throw Tus.anomaly(
            "\(strategy.codePrefix)_offset_unsettled", last.0, "kept changing where it stands")
        }
        (step, last) = try await strategy.head(context)
        exchange = .head
      case .restart:
        guard try run.restart() else {
          throw CourierError(
            .business, status: last.0.status.code, code: "upload_gone",
            serverMessage: "The server lost the upload twice; it was not sent.")
        }
        announced = true
        begin(at: 0)
        (step, last) = try await strategy.create(context)
        exchange = .creation
      case .fail(let error):
        throw error
      }
    }
  }

  private func begin(at offset: Int64) {
    run.started(at: offset)
    context.onState(.uploading(sent: offset, total: length))
  }

  /// One piece from `from`, sized by the confirmed rate (decision 2704): a piece cut short
  /// makes the next smaller, a `413` lowers the server's limit, a confirmed one measures the
  /// rate.
  private func append(from: Int64) async throws -> Answered {
    let piece = run.nextPiece(left: length - from)
    let clock = executor.clock
    let started = clock.now
    let answered: Answered
    do {
      answered = try await strategy.append(context, from: from, piece: piece)
    } catch {
      // A link that slowed down (a timeout) or broke: the resumed attempt starts small.
      run.pieces { $0.interrupted() }
      throw error
    }
    let took = started.duration(to: clock.now)
    let response = answered.answer.0
    if response.status.code == 413 {
      guard piece > 1 else {
        throw ResponseClassifier.classify(response, body: answered.answer.1.bytes)
          ?? Tus.anomaly("\(strategy.codePrefix)_piece_refused", response, "refused every size")
      }
      let named = IETFUpload.Limits(response.headerFields[.uploadLimit]).maxAppendSize
      run.pieces { $0.refused(piece: piece, named: named) }
      return (.resync, answered.answer)
    }
    switch answered.step {
    case .send(let next) where next > from:
      run.pieces { $0.confirmed(next - from, took: took) }
    case .complete:
      run.pieces { $0.confirmed(length - from, took: took) }
    default:
      break
    }
    return answered
  }
}

/// What a strategy's requests need: the transport and options of the attempt, the run, the
/// length, and the progress of a request's body.
struct ResumableContext: Sendable {
  let transport: any Transport
  /// The options of each request: the call's, then the attempt's.
  var options: TransportOptions
  let run: ResumableRun
  let length: Int64
  let onState: @Sendable (UploadState) -> Void
  let throttle: ProgressThrottle

  /// Takes the server's `max-append-size` (`Upload-Limit`) when it names one.
  /// - Parameter response: an answer of the server.
  func noteLimits(_ response: HTTPResponse) {
    guard let most = IETFUpload.Limits(response.headerFields[.uploadLimit]).maxAppendSize
    else { return }
    run.pieces { $0.limit(to: most) }
  }

  /// The upload's address.
  func uploadURL() throws -> URL {
    guard let text = run.record.uploadURL, let url = URL(string: text) else {
      throw CourierError(.unexpected, underlying: "no upload URL")
    }
    return url
  }

  /// The progress observer of a request whose body starts at `from`.
  func progress(from: Int64) -> @Sendable (TransferProgress) -> Void {
    let total = length
    let onState = onState
    let throttle = throttle
    return { value in
      let sent = min(total, from + value.sent)
      if throttle.admit(sent: sent, total: total) { onState(.uploading(sent: sent, total: total)) }
    }
  }
}
