import CourierCore
import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// The files a collection's records name, kept for offline reading when the collection asks
/// (`"offline_attachments": true`, decision 2507): after a sync or a refresh each stored
/// record's attachment fields that hold the server's reference are downloaded into the response
/// cache (resumably, under its budget) unless a copy is kept already, and the cache never
/// evicts a file a stored record names. A watch does the same as its passes end (2516).
package struct OfflineAttachments: Sendable {
  /// What one pass did.
  package struct Report: Sendable, Equatable {
    /// The URLs downloaded now.
    package var downloaded: [String] = []
    /// The URLs kept already (no request sent).
    package var kept: [String] = []
    /// The URLs that could not be kept, with why, in words.
    package var failed: [String: String] = [:]
    /// The URLs the path policy holds back for now (decision 2610), with why, in words.
    package var held: [String: String] = [:]
  }

  private let store: SessionStore
  private let pendingWrites: @Sendable () -> Set<String>

  /// The pass for a session's store.
  /// - Parameters:
  ///   - store: the session's local store.
  ///   - pendingWrites: the URLs pending writes reference (decision 2504), also never evicted.
  init(store: SessionStore, pendingWrites: @escaping @Sendable () -> Set<String>) {
    self.store = store
    self.pendingWrites = pendingWrites
  }

  /// Downloads whose cache spares what pending writes and stored records name.
  var downloads: Downloads {
    let offline = self
    return Downloads(
      environment: store.environment,
      referencedURLs: { offline.pendingWrites().union(offline.referencedURLs()) })
  }

  /// The collections that keep their records' files offline.
  private var collections: [CollectionDescription] {
    store.declared.filter { $0.offlineAttachments && !$0.attachments.isEmpty }
  }

  /// The URLs of the files the stored records of those collections name (deleted records and
  /// local references aside): never evicted from the cache. Empty when none asks or the local
  /// store cannot be read.
  /// - Returns: absolute URLs.
  package func referencedURLs() -> Set<String> {
    let collections = collections
    guard !collections.isEmpty,
      let shared = try? store.open(warn: PrivateFiles.warnOnStandardError)
    else { return [] }
    var urls = Set<String>()
    for collection in collections {
      guard let records = try? shared.store.read({ try $0.records(in: collection.name) }) else {
        continue
      }
      for record in records where !record.isDeleted {
        for field in collection.attachments {
          let value = record.payload?[field]
          guard Attachment.localID(value) == nil, let reference = value?.stringValue,
            let url = store.environment.attachmentURL(reference)
          else { continue }
          urls.insert(url.absoluteString)
        }
      }
    }
    return urls
  }

  /// Whether the file a record's attachment field names is kept in the cache (the TUI's
  /// "photo downloaded"), read once: always false when no collection keeps its files offline.
  /// - Returns: a check of a server's reference (a photo id).
  package func keptCheck() -> @Sendable (String) -> Bool {
    let environment = store.environment
    guard !collections.isEmpty,
      access(environment.responseCacheDirectory + "/index.sqlite", F_OK) == 0,
      let entries = try? environment.openResponseCache(warn: { _ in }).allEntries()
    else { return { _ in false } }
    let partition = environment.responseCachePartition
    let urls = Set(entries.filter { $0.partition == partition }.map(\.url))
    return { reference in
      environment.attachmentURL(reference).map { urls.contains($0.absoluteString) } ?? false
    }
  }

  /// `states` passed on as they come, with a ``fetch()`` after each state that is not
  /// syncing (a replay pass ended, the path changed), one at a time, those asked for meanwhile
  /// merged into one (decision 2516): a record the watch delivers, or one another process
  /// stored, gets its files while the watch runs. `states` as they are when no collection
  /// keeps its files offline.
  /// - Parameter states: a watch's states.
  /// - Returns: the same states.
  func following(_ states: AsyncThrowingStream<SyncState, any Error>)
    -> AsyncThrowingStream<SyncState, any Error>
  {
    guard !collections.isEmpty else { return states }
    let offline = self
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: SyncState.self)
    let task = Task {
      let (asks, ask) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
      let fetching = Task {
        for await _ in asks { _ = await offline.fetch() }
      }
      defer {
        ask.finish()
        fetching.cancel()
      }
      do {
        for try await state in states {
          continuation.yield(state)
          if !state.isSyncing { ask.yield() }
        }
        continuation.finish()
      } catch {
        continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Downloads every referenced file the cache does not hold yet, one after the other. A file
  /// the budget cannot hold is not kept (its download is deleted); the pass stops at the first
  /// failure to reach the server (the rest wait for the next one). A file the path policy
  /// holds back (a large one on a metered path, decision 2610) is not fetched: its HEAD only.
  /// - Returns: what was downloaded, kept already, or not kept and why.
  package func fetch() async -> Report {
    var report = Report()
    let urls = referencedURLs().sorted()
    guard !urls.isEmpty else { return report }
    let environment = store.environment
    let cache = try? environment.openResponseCache(warn: { _ in })
    let partition = environment.responseCachePartition
    let admit = PathHeld.check(environment.config, on: await store.currentPath())
    for url in urls {
      if let cache, !((try? cache.entries(partition: partition, url: url)) ?? []).isEmpty {
        report.kept.append(url)
        continue
      }
      do {
        let outcome = try await downloads.fetch(url, warn: { _ in }, admit: admit)
        if let reason = outcome.notKept {
          unlink(outcome.result.file.path)
          report.failed[url] = reason
        } else {
          report.downloaded.append(url)
        }
      } catch let held as PathHeld {
        report.held[url] = held.wait.sentence
      } catch let error as CourierError {
        report.failed[url] = error.userMessage
        if CachingMiddleware.offlineKinds.contains(where: { $0 ~= error }) { break }
      } catch {
        report.failed[url] = String(describing: error)
      }
    }
    return report
  }
}

extension CourierEnvironment {
  /// The URL of the file an attachment field's server reference names: `GET /photos/{id}` on
  /// the base URL (decision 2521: the URL is derived from the id). Nil for a reference that is
  /// not a plain path segment (letters, digits, `-_.~`).
  /// - Parameter reference: the server's reference.
  /// - Returns: the absolute URL.
  package func attachmentURL(_ reference: String) -> URL? {
    guard !reference.isEmpty,
      reference.unicodeScalars.allSatisfy({
        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
          || "-_.~".unicodeScalars.contains($0)
      })
    else { return nil }
    return try? client.url("/photos/" + reference)
  }
}
