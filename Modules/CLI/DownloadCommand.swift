import CourierCore
import CourierDomain
import CourierLinux
import CourierSystem
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier download PATH [--output FILE] [--pin-cached | --unpin-cached]`: the library's
/// `CourierSession.downloads` (decision 2506), printed.
enum DownloadCommand {
  static func run(
    path: String, output: String?, pin: Bool? = nil, context: CommandContext
  ) async throws -> ExitCode {
    let client = context.client
    try GetCommand.sameServer(try client.url(path), path: path, client: client, command: "download")
    let view = DownloadView(context: context)
    // A download a person runs is never held by the path (decision 2604): on a metered or
    // data-saving path a large one says what it costs, in one line, and goes at once.
    let network = await context.session.paths.monitor.snapshot()
    let note = PathHeld.note(context.environment.config, on: network)
    let outcome: Downloads.Outcome
    do {
      outcome = try await context.session.downloads.fetch(
        path, to: output.map { URL(fileURLWithPath: $0) }, pinned: pin,
        progress: { view.progress($0) },
        warn: { context.output.err("courier: warning: \($0)\n") },
        admit: { bytes in
          if let line = note(bytes) { context.output.err("courier: note: \(line)\n") }
        })
    } catch {
      view.finish()
      throw error
    }
    view.finish()
    if let reason = outcome.notKept {
      context.output.err(
        "courier: warning: the file is not kept in the cache: \(LogText.escaped(reason))\n")
    }
    let result = outcome.result
    var age: Int?
    if case .stale(let seconds) = outcome.cache { age = seconds }
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("ok"), "file": .string(result.file.path), "size": .int(result.size),
        "resumed_from": .int(result.resumedFrom), "received": .int(result.received),
      ]
      if let answer = outcome.cache {
        object["cache"] = .string(answer == .revalidated ? "revalidated" : "stale")
      }
      if let age { object["age_seconds"] = .int(Int64(age)) }
      if let etag = result.etag { object["etag"] = .string(etag) }
      if outcome.cache == nil, let date = result.lastModified {
        object["last_modified"] = .string(date)
      }
      if let sha256 = result.sha256 { object["sha256"] = .string(sha256) }
      context.output.out(JSONLine.encode(object) + "\n")
      return .success
    }
    if let age { context.output.err("Offline: the copy from \(GetCommand.ago(age)).\n") }
    var line =
      "\(LogText.escaped(result.file.path))  \(CompressionDecision.formatBytes(result.size))"
    if outcome.cache != nil { line += "  (cached)" }
    if result.resumedFrom > 0 {
      line += "  (resumed at \(CompressionDecision.formatBytes(result.resumedFrom)))"
    }
    if let sha256 = result.sha256 { line += "  sha256 \(sha256)" }
    context.output.out(line + "\n")
    return .success
  }
}

/// A download's progress: a bar redrawn with `\r` on standard error on a terminal (as an
/// upload's), or one JSON object every 250 ms with `--json`.
final class DownloadView: Sendable {
  private struct State {
    var start = ContinuousClock.now
    var lastDraw: ContinuousClock.Instant?
    var base: Int64?
    var shown = false
  }

  private let context: CommandContext
  private let state = Mutex(State())

  init(context: CommandContext) { self.context = context }

  func progress(_ step: TransferProgress) {
    let now = ContinuousClock.now
    let json = context.global.json
    let interval = Duration.milliseconds(json ? 250 : 100)
    let (due, elapsed, base) = state.withLock { state -> (Bool, Duration, Int64) in
      if state.base == nil { state.base = step.sent }
      let due =
        step.sent >= step.total || state.lastDraw.map { $0.duration(to: now) >= interval } ?? true
      if due { state.lastDraw = now }
      return (due, state.start.duration(to: now), state.base ?? 0)
    }
    guard due else { return }
    if json {
      context.output.out(
        JSONLine.encode([
          "event": .string("progress"), "received": .int(step.sent), "total": .int(step.total),
        ]) + "\n")
      return
    }
    guard context.output.isTerminal else { return }
    state.withLock { $0.shown = true }
    context.output.err(
      "\r"
        + UploadView.progressLine(
          sent: step.sent, total: step.total, elapsed: elapsed, base: base))
  }

  func finish() {
    let shown = state.withLock { state in
      defer { state.shown = false }
      return state.shown
    }
    if shown { context.output.err("\n") }
  }
}
