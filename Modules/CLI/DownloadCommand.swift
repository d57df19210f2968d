import CourierCore
import CourierDomain
import CourierLinux
import CourierSQLite
import CourierSystem
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier download PATH [--output FILE] [--pin-cached | --unpin-cached]`.
enum DownloadCommand {
  static func run(
    path: String, output: String?, pin: Bool? = nil, context: CommandContext
  ) async throws -> ExitCode {
    let client = context.client
    let url = try client.url(path)
    try GetCommand.sameServer(url, path: path, client: client, command: "download")
    let data = context.environment.config.dataDirectory
    // Without --output the file lives in the response cache (decision 2504).
    let cache = output == nil ? openCache(context) : nil
    let partition = context.environment.responseCachePartition
    if let cache,
      let kept = try await revalidate(
        url, cache: cache, partition: partition, pin: pin, context: context)
    {
      return kept
    }
    let destination =
      output.map { URL(fileURLWithPath: $0) } ?? Self.defaultFile(for: url, in: data)
    let downloader = Downloader(
      transport: client.transport, options: client.options,
      stateDirectory: data.appendingPathComponent("downloads/.state"),
      hasher: context.environment.fileHasher)
    let view = DownloadView(context: context)
    // The path policy (decision 2610): a large download waits for an unmetered path unless
    // --allow-expensive; the path as the system says it now (a snapshot, no probe).
    let config = context.environment.config
    let path = await context.session.paths.monitor.snapshot()
    var result: DownloadResult
    do {
      result = try await downloader.download(
        url, to: destination, progress: { view.progress($0) },
        admit: { bytes in
          if let wait = config.pathPolicy.wait(
            for: .downloads, bytes: bytes, on: path,
            allowsExpensive: config.allowsExpensiveNetworkAccess)
          {
            throw PathHeld(wait: wait, bytes: bytes)
          }
        })
    } catch let held as PathHeld {
      view.finish()
      return context.refuse(held.message, code: "path_policy", exit: .transient)
    } catch {
      view.finish()
      throw error
    }
    view.finish()
    if let cache {
      var fields = HTTPFields()
      if let etag = result.etag { fields[.eTag] = etag }
      if let date = result.lastModified { fields[.lastModified] = date }
      // A file the budget cannot hold stays in downloads/, said so.
      do {
        let entry = try cache.admit(
          fileAt: result.file.path, partition: partition, url: url.absoluteString,
          fields: fields, pinned: pin ?? false, now: Date())
        // A replaced entry's pin is kept by the admission; --unpin-cached still lets it go.
        if pin == false {
          try cache.setPinned(false, partition: partition, url: url.absoluteString)
        }
        if let body = try cache.bodyPath(of: entry) { result.file = URL(fileURLWithPath: body) }
      } catch let error as StoreError {
        context.output.err(
          "courier: warning: the file is not kept in the cache: "
            + "\(LogText.escaped(error.message))\n")
      }
    }
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("ok"), "file": .string(result.file.path), "size": .int(result.size),
        "resumed_from": .int(result.resumedFrom), "received": .int(result.received),
      ]
      if let etag = result.etag { object["etag"] = .string(etag) }
      if let date = result.lastModified { object["last_modified"] = .string(date) }
      if let sha256 = result.sha256 { object["sha256"] = .string(sha256) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      var line =
        "\(LogText.escaped(result.file.path))  \(CompressionDecision.formatBytes(result.size))"
      if result.resumedFrom > 0 {
        line += "  (resumed at \(CompressionDecision.formatBytes(result.resumedFrom)))"
      }
      if let sha256 = result.sha256 { line += "  sha256 \(sha256)" }
      context.output.out(line + "\n")
    }
    return .success
  }

  /// The data folder's response cache; nil, with a warning, when it cannot be opened (the
  /// download then stays in downloads/, as with --output).
  static func openCache(_ context: CommandContext) -> SQLiteResponseCache? {
    do {
      let uploads = context.session.queuedUploads
      return try context.environment.openResponseCache(
        protected: { uploads.referencedURLs() },
        warn: {
          context.output.err("courier: warning: \($0)\n")
        })
    } catch {
      context.output.err("courier: warning: the response cache is not used: \(error)\n")
      return nil
    }
  }

  /// Asks the server whether the cached copy of `url` is current (a conditional HEAD:
  /// `If-None-Match`, else `If-Modified-Since`). Reports the cached file and returns success on
  /// a 304, or when the server cannot be reached (with its age); nil when there is no cached
  /// copy or the server sent another version (the caller downloads it afresh).
  static func revalidate(
    _ url: URL, cache: SQLiteResponseCache, partition: String, pin: Bool?,
    context: CommandContext
  ) async throws -> ExitCode? {
    guard let entry = try cache.entries(partition: partition, url: url.absoluteString).first,
      let body = try cache.bodyPath(of: entry)
    else { return nil }
    var request = try HTTPRequest(checking: url, method: .head)
    if let etag = entry.fields[.eTag] {
      request.headerFields[.ifNoneMatch] = etag
    } else if let date = entry.fields[.lastModified] {
      request.headerFields[.ifModifiedSince] = date
    } else {
      return nil
    }
    var age: Int?
    do {
      let reply = try await context.client.exchange(request)
      guard reply.response.status.code == 304 else { return nil }
      try cache.refresh(
        entry, fields: HTTPCacheRules.updated(entry.fields, with: reply.response.headerFields),
        now: Date())
    } catch let error as CourierError
      where CachingMiddleware.offlineKinds.contains(where: { $0 ~= error })
    {
      age = max(0, Int(Date().timeIntervalSince(entry.storedAt)))
      try cache.touch(entry, now: Date())
    }
    if let pin { try cache.setPinned(pin, partition: partition, url: url.absoluteString) }
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("ok"), "file": .string(body), "size": .int(Int64(entry.size)),
        "resumed_from": .int(0), "received": .int(0),
        "cache": .string(age == nil ? "revalidated" : "stale"),
      ]
      if let age { object["age_seconds"] = .int(Int64(age)) }
      if let etag = entry.fields[.eTag] { object["etag"] = .string(etag) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      if let age { context.output.err("Offline: the copy from \(GetCommand.ago(age)).\n") }
      context.output.out(
        "\(LogText.escaped(body))  \(CompressionDecision.formatBytes(Int64(entry.size)))"
          + "  (cached)\n")
    }
    return .success
  }

  /// `<data>/downloads/<last path segment>`; `download` when the path has none usable.
  static func defaultFile(for url: URL, in data: URL) -> URL {
    var name = url.lastPathComponent
    if name.isEmpty || name == "/" || name == "." || name == ".." || name.hasPrefix(".") {
      name = "download"
    }
    return data.appendingPathComponent("downloads").appendingPathComponent(name)
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

/// A download the path policy holds back (decision 2610): not fetched, said why.
struct PathHeld: Error {
  var wait: PathPolicy.Wait
  var bytes: Int64?

  /// The sentence `courier download` prints.
  var message: String {
    let size = bytes.map { " (\(CompressionDecision.formatBytes($0)))" } ?? ""
    let what =
      switch wait {
      case .expensive: "the network is metered"
      case .constrained: "the network saves data"
      case .portal: "a Wi-Fi login page holds the network"
      }
    return "Not downloaded: the file\(size) is large and \(what); \(wait.sentence). "
      + (wait == .expensive ? "Add --allow-expensive to download it anyway." : "")
  }
}
