import CourierCore
import CourierDomain
import CourierPorts
import CourierSQLite
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Files from the server, downloaded resumably and kept for offline reading (decisions 2501,
/// 2504 and 2506): written as they arrive to a partial file that a later call continues after a
/// kill or a dropped link (`Range` + `If-Range`), checked against the server's `Repr-Digest`,
/// then kept in the data folder's response cache under the byte budget (or written where you
/// say). A second call asks the server whether the kept copy changed (a 304 costs no body);
/// offline it answers the kept copy.
///
/// ```swift
/// let photo = try await courier.downloads.file("/photos/beach", pinned: true) { step in
///   print("\(step.sent) of \(step.total) bytes")
/// }
/// ```
public struct Downloads: Sendable {
  /// What a download did, for `courier download` to print.
  package struct Outcome: Sendable {
    /// The file, its size, validators and digest, where the last request resumed.
    package var result: DownloadResult
    /// How the kept copy answered: nil when the file was downloaded.
    package var cache: CacheAnswer?
    /// Why the file is not kept in the cache (it stays in `downloads/`), when it is not.
    package var notKept: String?
  }

  /// How a kept copy answered instead of a download.
  package enum CacheAnswer: Sendable, Equatable {
    /// The server said it had not changed (a 304).
    case revalidated
    /// The server could not be reached: the copy is this many seconds old.
    case stale(ageSeconds: Int)
  }

  private let environment: CourierEnvironment
  private let referencedURLs: @Sendable () -> Set<String>

  /// Downloads for one session.
  /// - Parameters:
  ///   - environment: the composition root (pipeline, data folder, cache budget).
  ///   - referencedURLs: the URLs pending writes and kept records name, never evicted.
  package init(
    environment: CourierEnvironment, referencedURLs: @escaping @Sendable () -> Set<String>
  ) {
    self.environment = environment
    self.referencedURLs = referencedURLs
  }

  /// Downloads `path` (relative to the base URL, or a full URL on its server) and returns the
  /// file: in the response cache, managed by Courier (read it, do not change or move it), or
  /// `output` when given.
  /// - Parameters:
  ///   - path: the path or URL.
  ///   - output: a file of yours to write instead of keeping it in the cache.
  ///   - pinned: true to keep the cached file out of the budget's eviction, false to let it go
  ///     again, nil to leave it as it was.
  ///   - progress: bytes of the whole file present so far and its length, as they arrive.
  /// - Returns: the file.
  /// - Throws: `CourierError`: `invalidInput` for a URL on another server; the server's
  ///   refusal; `invalidResponse` for a file that does not match the server's digest (deleted);
  ///   an offline kind when the server cannot be reached and no copy is kept.
  public func file(
    _ path: String, to output: URL? = nil, pinned: Bool? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> URL {
    try await fetch(path, to: output, pinned: pinned, progress: progress).result.file
  }

  /// ``file(_:to:pinned:progress:)`` with everything `courier download` reports.
  /// - Parameters:
  ///   - path: the path or URL.
  ///   - output: a file of the caller's instead of the cache.
  ///   - pinned: pin, unpin, or leave the cached file as it was.
  ///   - progress: told as bytes arrive.
  ///   - warn: told when the cache cannot be opened (the file then stays in `downloads/`).
  ///   - admit: told the bytes still to fetch once the server said them, before any body is
  ///     asked for; what it throws ends the download (the path policy, decision 2610).
  /// - Returns: the outcome.
  /// - Throws: as ``file(_:to:pinned:progress:)``, or what `admit` threw.
  package func fetch(
    _ path: String, to output: URL? = nil, pinned: Bool? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    warn: @Sendable (String) -> Void = PrivateFiles.warnOnStandardError,
    admit: ((Int64?) throws -> Void)? = nil
  ) async throws -> Outcome {
    let client = environment.client
    let url = try client.url(path)
    guard RedirectRule.sameOrigin(url, client.baseURL) else {
      throw CourierError(
        .invalidInput, code: "download_other_server",
        serverMessage:
          "\(LoggingTransport.redacted(url)) is on another server than the base URL: Courier "
          + "downloads only from its own server.",
        underlying: "another origin", context: "GET \(url.path)")
    }
    let data = environment.config.dataDirectory
    let destination = output ?? Self.defaultFile(for: url, in: data)
    let locks = data.appendingPathComponent("downloads/.locks")
    // One at a time per URL and destination, in this process and across processes (2517):
    // the second finds the first's file in the cache and revalidates it.
    return try await DownloadLock.holding(DownloadLock.path(url, destination, in: locks)) {
      try await fetch(
        url, to: destination, cached: output == nil, pinned: pinned, progress: progress,
        warn: warn, admit: admit)
    }
  }

  /// ``fetch(_:to:pinned:progress:warn:admit:)`` of a checked URL, under its lock.
  private func fetch(
    _ url: URL, to destination: URL, cached: Bool, pinned: Bool?,
    progress: (@Sendable (TransferProgress) -> Void)?, warn: @Sendable (String) -> Void,
    admit: ((Int64?) throws -> Void)?
  ) async throws -> Outcome {
    let client = environment.client
    let data = environment.config.dataDirectory
    let cache = cached ? openCache(warn: warn) : nil
    let partition = environment.responseCachePartition
    if let cache, let kept = try await revalidate(url, cache, partition, pinned: pinned) {
      return kept
    }
    let downloader = Downloader(
      transport: client.transport, options: client.options,
      stateDirectory: Self.stateDirectory(in: data), hasher: environment.fileHasher)
    var outcome = Outcome(
      result: try await downloader.download(
        url, to: destination, progress: progress, admit: admit))
    guard let cache else { return outcome }
    var fields = HTTPFields()
    if let etag = outcome.result.etag { fields[.eTag] = etag }
    if let date = outcome.result.lastModified { fields[.lastModified] = date }
    if let directives = outcome.result.cacheControl { fields[.cacheControl] = directives }
    // A file the budget cannot hold stays in downloads/, said so.
    do {
      let entry = try cache.admit(
        fileAt: outcome.result.file.path, partition: partition, url: url.absoluteString,
        fields: fields, pinned: pinned ?? false, now: Date())
      // A replaced entry's pin is kept by the admission; pinned: false still lets it go.
      if pinned == false {
        try cache.setPinned(false, partition: partition, url: url.absoluteString)
      }
      if let body = try cache.bodyPath(of: entry) {
        outcome.result.file = URL(fileURLWithPath: body)
      }
    } catch let error as StoreError {
      outcome.notKept = error.message
    }
    return outcome
  }

  /// The data folder's response cache, its eviction sparing what pending writes and kept
  /// records name; nil, with a warning, when it cannot be opened.
  private func openCache(warn: @Sendable (String) -> Void) -> SQLiteResponseCache? {
    do {
      return try environment.openResponseCache(protected: referencedURLs, warn: warn)
    } catch {
      warn("the response cache is not used: \(error)")
      return nil
    }
  }

  /// Asks the server whether the cached copy of `url` is current (a conditional HEAD:
  /// `If-None-Match`, else `If-Modified-Since`). The kept copy on a 304, or when the server
  /// cannot be reached (with its age); nil when there is none or the server has another
  /// version (the caller downloads it afresh).
  private func revalidate(
    _ url: URL, _ cache: SQLiteResponseCache, _ partition: String, pinned: Bool?
  ) async throws -> Outcome? {
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
    var answer = CacheAnswer.revalidated
    do {
      let reply = try await environment.client.exchange(request)
      guard reply.response.status.code == 304 else { return nil }
      try cache.refresh(
        entry, fields: HTTPCacheRules.updated(entry.fields, with: reply.response.headerFields),
        now: Date())
    } catch let error as CourierError
      where CachingMiddleware.offlineKinds.contains(where: { $0 ~= error })
    {
      answer = .stale(ageSeconds: max(0, Int(Date().timeIntervalSince(entry.storedAt))))
      try cache.touch(entry, now: Date())
    }
    if let pinned { try cache.setPinned(pinned, partition: partition, url: url.absoluteString) }
    let result = DownloadResult(
      file: URL(fileURLWithPath: body), size: Int64(entry.size), etag: entry.fields[.eTag],
      lastModified: entry.fields[.lastModified], cacheControl: entry.fields[.cacheControl],
      sha256: nil, resumedFrom: 0, received: 0)
    return Outcome(result: result, cache: answer)
  }

  /// `<data>/downloads/.state`: the downloads' sidecars.
  private static func stateDirectory(in data: URL) -> URL {
    data.appendingPathComponent("downloads/.state")
  }

  /// `<data>/downloads/<last path segment>`; `download` when the path has none usable.
  /// - Parameters:
  ///   - url: the URL downloaded.
  ///   - data: the data folder.
  /// - Returns: where its partial file and, outside the cache, the file go.
  package static func defaultFile(for url: URL, in data: URL) -> URL {
    var name = url.lastPathComponent
    if name.isEmpty || name == "/" || name == "." || name == ".." || name.hasPrefix(".") {
      name = "download"
    }
    return data.appendingPathComponent("downloads").appendingPathComponent(name)
  }
}
