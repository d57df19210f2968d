import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSignals
import CourierSystem
import Dispatch
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

/// `courier upload`.
enum UploadCommand {
  static func run(_ options: UploadOptions, context: CommandContext) async throws -> ExitCode {
    let file = URL(fileURLWithPath: options.file)
    if let problem = fileProblem(file) { return context.report(problem, direct: !options.queue) }
    let client = context.client
    let session = context.session
    let resumable = options.resumable || session.environment.config.resumableUploads
    let target = try client.url(options.target ?? (resumable ? "/uploads" : "/photos"))
    // A tus endpoint may be another server (the token never goes there: the auth step sends
    // it to the base URL's origin only); a multipart target must be on the base URL's server.
    if let given = options.target, !resumable {
      try GetCommand.sameServer(target, path: given, client: client, command: "upload")
    }
    var compression = CompressionOptions()
    if let maxPixels = options.maxPixels { compression.maxLongEdge = max(1, maxPixels) }
    if let quality = options.quality { compression.quality = min(100, max(1, quality)) }
    let request = UploadRequest(
      file: file, target: target, title: options.title,
      fields: options.fields.map { MultipartPart.text($0.name, $0.value) },
      compress: !options.noCompress, compression: compression,
      // The photos endpoint answers with the stored record; another target only has to answer
      // JSON (the reference backend's /upload echoes what it parsed as a list). A tus upload
      // to the backend's /uploads must name the photo it became; elsewhere the final offset
      // is the proof.
      confirmation: options.target == nil ? .record : (resumable ? .status : .json))
    let view = UploadView(context: context)
    if options.queue {
      return try await queue(
        request, options: options, resumable: resumable, view: view, context: context)
    }
    // The upload runs in a task of its own so SIGINT or SIGTERM can cancel it, and the command
    // waits for it to finish unwinding: its temporary files are gone when the process exits.
    let choice = try await resumableChoice(
      request, options: options, resumable: resumable, view: view, context: context)
    let upload = Task {
      choice.tus
        ? try await session.uploads.sendResumable(
          choice.request, onState: { view.show($0) },
          onResume: { view.resumed(at: $0, total: $1) })
        : try await session.uploads.sendOfferingResumption(
          choice.request, onState: { view.show($0) },
          onResume: { view.resumed(at: $0, total: $1) }, interop: options.interop)
    }
    // The first signal caught names the exit code: 130 for SIGINT, 143 for SIGTERM (2424).
    let caught = Mutex<Int32?>(nil)
    let interrupts = SignalWaiter([SIGINT, SIGTERM]) { number in
      caught.withLock { $0 = $0 ?? number }
      upload.cancel()
    }
    defer { interrupts.cancel() }
    let outcome = await upload.result
    view.finishProgress()
    switch outcome {
    case .success(let result):
      let offered = options.interop ?? session.environment.config.ietfInteropVersion ?? .current
      if !choice.tus, let used = result.interop, used != offered {
        view.negotiated(used, refused: offered)
      }
      view.succeeded(result)
      return .success
    case .failure(let error):
      // Sent directly: nothing is kept to send later, and the message must not say so.
      let failure = CourierError.wrapping(error)
      let code = context.report(failure, direct: true)
      guard failure.kind == .cancelled, let signal = caught.withLock({ $0 }) else { return code }
      return ExitCode.afterSignal(signal)
    }
  }

  /// Which protocol a direct upload takes: with `--resumable` to the server's own endpoints,
  /// whatever it offers, the IETF draft first (decision 2702), said on standard error; tus to
  /// a `--to` target; otherwise the form, which a draft server may still make resumable.
  static func resumableChoice(
    _ request: UploadRequest, options: UploadOptions, resumable: Bool, view: UploadView,
    context: CommandContext
  ) async throws -> (tus: Bool, request: UploadRequest) {
    guard resumable else { return (false, request) }
    guard options.target == nil else { return (true, request) }
    let form = try context.client.url("/photos")
    // The form's target takes images only (decision 2706): another file goes by tus, which
    // takes any file, wherever the server offers it.
    let image =
      (try? MultipartPart.file("file", at: request.file).contentType)?.hasPrefix("image/")
      ?? false
    let offered = await context.session.uploads.offeredResumption(
      form: form, tus: request.target, draft: image)
    view.chose(
      offered, interop: options.interop ?? context.session.environment.config.ietfInteropVersion)
    var direct = request
    direct.target = form
    return offered == .tus ? (true, request) : (false, direct)
  }

  /// `courier upload --queue`: the bytes and the outbox entry in the data folder, no request;
  /// tus when resumable, else tus when the target speaks it and multipart otherwise.
  static func queue(
    _ request: UploadRequest, options: UploadOptions, resumable: Bool, view: UploadView,
    context: CommandContext
  ) async throws -> ExitCode {
    let client = context.client
    var form = request
    var tusEndpoint: URL?
    var tusConfirmation = request.confirmation
    if !resumable {
      form.target = try client.url(options.target ?? "/photos")
      tusEndpoint = try client.url(options.target ?? "/uploads")
      tusConfirmation = options.target == nil ? .record : .status
    }
    let entry: OutboxEntry
    do {
      entry = try await context.session.queuedUploads.add(
        form, transfer: resumable ? .tus : .auto, tusEndpoint: tusEndpoint,
        tusConfirmation: tusConfirmation, allowsExpensive: options.allowExpensive,
        interop: options.interop, onState: { view.show($0) })
    } catch {
      return context.report(CourierError.wrapping(error))
    }
    let upload = try? QueuedUpload(payload: entry.operation.payload)
    let size = upload?.length ?? 0
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("queued"), "id": .string(entry.key.id),
        "sequence": .int(entry.sequence),
        "operation_id": .string(entry.id.uuidString.lowercased()), "bytes": .int(size),
        "transfer": .string(upload?.transfer.rawValue ?? ""),
      ]
      if let upload { object["compression"] = Self.compression(upload.verdict) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.out(
        "Queued upload \(entry.key.id) (#\(entry.sequence), "
          + "\(CompressionDecision.formatBytes(size))): 'courier sync' sends it.\n")
    }
    return .success
  }

  /// `{"send": …, "reason": …}`: what the compression step decided.
  static func compression(_ verdict: CompressionDecision.Verdict) -> JSONValue {
    .object(["send": .string(verdict.send.rawValue), "reason": .string(verdict.reason.rawValue)])
  }

  /// Why the file can't be sent, found before any request and without opening it: missing,
  /// unreadable, or not a regular file (a folder, a FIFO that would block the open, a device
  /// such as `/dev/zero`, a socket).
  static func fileProblem(_ file: URL) -> CourierError? {
    let name = file.lastPathComponent
    guard let why = RegularFile.problem(atPath: file.path) else { return nil }
    return CourierError(
      .fileUnavailable, code: "file_unavailable", serverMessage: "The file \(name) \(why).",
      field: "file", context: file.path)
  }
}

/// Shows an upload's states: a progress bar redrawn with `\r` on standard error on a terminal,
/// a line per retry decision, or one JSON object per event with `--json`.
final class UploadView: Sendable {
  private struct State {
    var attemptStart = ContinuousClock.now
    var lastDraw: ContinuousClock.Instant?
    var barShown = false
    var resumedFrom: Int64 = 0
    var total: Int64?
  }

  private let context: CommandContext
  private let state = Mutex(State())
  private let redrawInterval = Duration.milliseconds(100)
  private let jsonInterval = Duration.milliseconds(250)
  /// The queued upload this view follows (`courier sync`), named in each `--json` event.
  private let uploadID: String?

  init(context: CommandContext, uploadID: String? = nil) {
    self.context = context
    self.uploadID = uploadID
  }

  /// The bytes of the upload being shown, when known beforehand (a queued upload).
  var total: Int64? {
    get { state.withLock { $0.total } }
    set { state.withLock { $0.total = newValue } }
  }

  private var json: Bool { context.global.json }
  private var output: any CommandOutput { context.output }

  func show(_ upload: UploadState) {
    switch upload.phase {
    case .compressing:
      if json { emit(["event": .string("compressing")]) }
    case .prepared(let verdict):
      if json {
        emit([
          "event": .string("prepared"), "send": .string(verdict.send.rawValue),
          "reason": .string(verdict.reason.rawValue), "message": .string(verdict.message),
        ])
      } else {
        output.err("courier: \(LogText.escaped(verdict.message))\n")
      }
    case .uploading(let sent, let total):
      progress(sent: sent, total: total)
    case .retrying(let attempt, let maxAttempts, let delay, let reason):
      let event = RetryEvent.retrying(
        attempt: attempt, maxAttempts: maxAttempts, delay: delay, error: reason)
      state.withLock {
        $0.attemptStart = .now
        $0.lastDraw = nil
      }
      if json {
        var object: [String: JSONValue] = [
          "event": .string("retrying"), "attempt": .int(attempt), "next_attempt": .int(attempt + 1),
          "max_attempts": .int(maxAttempts), "delay_seconds": .double(delay.seconds),
          "kind": .string(reason.kind.rawValue), "message": .string(event.humanDescription),
        ]
        if let status = reason.status { object["http_status"] = .int(status) }
        emit(object)
      } else if !context.global.verbose {
        // With --verbose the pipeline's log already prints each decision.
        finishProgress()
        output.err("courier: \(LogText.escaped(event.humanDescription))\n")
      }
    case .succeeded, .failed:
      break
    }
  }

  /// The resumable protocol the server offered, said once before the upload starts, with the
  /// draft's version offered first (`interop`, else 8).
  func chose(_ offered: Uploads.ResumableProtocol, interop: IETFInterop?) {
    let name: String
    switch offered {
    case .draft: name = "resumable (IETF draft, interop \(interop ?? .current))"
    case .tus: name = "resumable (tus \(Tus.version))"
    case .none: name = "not resumable (the server offers neither the IETF draft nor tus)"
    }
    if json {
      emit(["event": .string("protocol"), "protocol": .string(name)])
    } else {
      output.err("courier: \(name)\n")
    }
  }

  /// The server refused the draft's version offered first and took `used` (decision 2708).
  func negotiated(_ used: IETFInterop, refused: IETFInterop) {
    let text =
      "the server refused interop \(refused) of the IETF draft; the upload spoke interop "
      + "\(used), the highest both speak"
    if json {
      emit(["event": .string("protocol"), "protocol": .string(text), "interop": .int(used.number)])
    } else {
      finishProgress()
      output.err("courier: \(text)\n")
    }
  }

  /// A resumable upload goes on from `offset`: said once, and the rate counts from there.
  func resumed(at offset: Int64, total: Int64) {
    state.withLock {
      $0.attemptStart = .now
      $0.resumedFrom = offset
      $0.lastDraw = nil
    }
    if json {
      emit(["event": .string("resumed"), "resumed_at": .int(offset), "total": .int(total)])
    } else {
      finishProgress()
      output.err(
        "courier: resumed at \(CompressionDecision.formatBytes(offset)) of "
          + "\(CompressionDecision.formatBytes(total)): the server has the rest before it\n")
    }
  }

  func succeeded(_ result: UploadResult) {
    let response = result.response
    if let uploadURL = result.uploadURL {
      // A tus upload's last answer has no body: say what was stored, and where.
      var object: [String: JSONValue] = [
        "upload_url": .string(uploadURL.absoluteString), "size": .int(result.bodyLength),
        "resumed_at": .int(result.resumedAt ?? 0),
      ]
      if let id = result.recordID { object["id"] = .string(id) }
      if let interop = result.interop { object["interop"] = .int(interop.number) }
      if json {
        object["status"] = .string("ok")
        object["http_status"] = .int(response.status.code)
        object["attempts"] = .int(result.attempts)
        object["idempotency_key"] = .string(result.idempotencyKey)
        object["compression"] = UploadCommand.compression(result.verdict)
      }
      emit(object)
      return
    }
    if json {
      emit([
        "status": .string("ok"), "http_status": .int(response.status.code),
        "attempts": .int(result.attempts), "bytes": .int(result.bodyLength),
        "idempotency_key": .string(result.idempotencyKey),
        "compression": UploadCommand.compression(result.verdict),
        "body": JSONLine.body(result.responseBody.bytes),
      ])
    } else {
      output.out(GetCommand.bodyText(result.responseBody.bytes, for: output))
    }
  }

  /// Ends the progress line so the next message starts on a line of its own.
  func finishProgress() {
    let shown = state.withLock { state in
      defer { state.barShown = false }
      return state.barShown
    }
    if shown { output.err("\n") }
  }

  private func progress(sent: Int64, total: Int64) {
    let now = ContinuousClock.now
    let interval = json ? jsonInterval : redrawInterval
    let (due, elapsed, base) = state.withLock { state -> (Bool, Duration, Int64) in
      let due =
        sent >= total || state.lastDraw.map { $0.duration(to: now) >= interval } ?? true
      if due { state.lastDraw = now }
      return (due, state.attemptStart.duration(to: now), state.resumedFrom)
    }
    guard due else { return }
    if json {
      emit(["event": .string("progress"), "sent": .int(sent), "total": .int(total)])
      return
    }
    guard output.isTerminal else { return }
    let line = Self.progressLine(sent: sent, total: total, elapsed: elapsed, base: base)
    state.withLock { $0.barShown = true }
    output.err("\r" + line)
  }

  /// `[#########-----------]  45%  12.3 MB / 27.1 MB  8.2 MB/s  ETA 2 s`
  static func progressLine(sent: Int64, total: Int64, elapsed: Duration, base: Int64 = 0)
    -> String
  {
    let width = 24
    let fraction = total > 0 ? min(1, Double(sent) / Double(total)) : 1
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    // `%3d%%` by hand (String(format:) is corelibs Foundation).
    let digits = String(Int(fraction * 100))
    let percent = String(repeating: " ", count: max(0, 3 - digits.count)) + digits + "%"
    let seconds = max(elapsed.seconds, 0.001)
    // The rate of this run: bytes the server held before it are not counted.
    let rate = Double(max(0, sent - base)) / seconds
    let sizes =
      "\(CompressionDecision.formatBytes(sent)) / \(CompressionDecision.formatBytes(total))"
    var line = "[\(bar)] \(percent)  \(sizes)"
    if sent > base && elapsed > .milliseconds(200) {
      line += "  \(CompressionDecision.formatBytes(Int64(rate)))/s"
      if sent < total {
        let eta = Int((Double(total - sent) / rate).rounded(.up))
        line += "  ETA \(eta) s"
      }
    }
    return line + "\u{1B}[K"
  }

  private func emit(_ object: [String: JSONValue]) {
    var object = object
    if let uploadID { object["id"] = .string(uploadID) }
    output.out(JSONLine.encode(object) + "\n")
  }
}

/// `courier sync`'s view of the queued uploads it sends: the progress bar and the
/// `--json` events of `courier upload` (`resumed` with `resumed_at`, then `progress`), each
/// event naming the upload's `id`, the bar of a resumed upload starting at the offset the
/// server held. It follows `QueuedUploads.updates()` from ``start(_:)`` until
/// ``stop()``, which returns once nothing more will be printed.
final class QueuedUploadFollower: Sendable {
  private struct Shown {
    var views: [String: UploadView] = [:]
  }
  private let shown = Mutex(Shown())
  private let context: CommandContext
  private let task = Mutex<Task<Void, Never>?>(nil)

  private init(context: CommandContext) { self.context = context }

  /// Starts following the session's queued uploads.
  static func start(_ context: CommandContext) -> QueuedUploadFollower {
    let follower = QueuedUploadFollower(context: context)
    let updates = context.session.queuedUploads.updates()
    follower.task.withLock {
      $0 = Task {
        for await list in updates { follower.show(list) }
      }
    }
    return follower
  }

  /// Stops following and ends any bar still drawn.
  func stop() async {
    let running = task.withLock { $0 }
    running?.cancel()
    await running?.value
    let views = shown.withLock { shown in
      defer { shown.views = [:] }
      return Array(shown.views.values)
    }
    for view in views { view.finishProgress() }
  }

  private func show(_ list: [QueuedUploadProgress]) {
    let listed = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    var ended: [(UploadView, Int64?)] = []
    var updates: [(UploadView, QueuedUploadProgress, Bool)] = []
    shown.withLock { shown in
      for (id, view) in shown.views where listed[id]?.sending == nil {
        // Gone from the outbox: delivered, so its bar ends full; still there: stopped.
        ended.append((view, listed[id] == nil ? view.total : nil))
        shown.views[id] = nil
      }
      for item in list {
        guard item.sending != nil, item.resumedAt != nil else { continue }
        let isNew = shown.views[item.id] == nil
        let view = shown.views[item.id] ?? UploadView(context: context, uploadID: item.id)
        shown.views[item.id] = view
        updates.append((view, item, isNew))
      }
    }
    for (view, total) in ended {
      if let total { view.show(.uploading(sent: total, total: total)) }
      view.finishProgress()
    }
    for (view, item, isNew) in updates {
      guard let sent = item.sending, let start = item.resumedAt else { continue }
      if isNew {
        view.total = item.total
        if start > 0 { view.resumed(at: start, total: item.total) }
      }
      view.show(.uploading(sent: max(sent, start), total: item.total))
    }
  }
}
