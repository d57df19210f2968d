import CourierCore
import CourierDomain
import CourierPorts
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

/// A session's local store, opened once at the first use and shared by its collections, its
/// queued uploads, its outbox and its `sync()`: the store's sending side (`OutboxSync`), whose
/// replayer gets one route for each declared collection and one for queued uploads when it is
/// made, and nowhere else (decision 2303).
final class SessionStore: Sendable {
  let environment: CourierEnvironment
  /// The collections the session syncs: articles, then those the configuration declares.
  let declared: [CollectionDescription]
  /// Who removes a delivered queued upload's kept bytes.
  let removal: DeliveredBodyRemoval
  /// The live progress of the queued uploads this process sends.
  let uploadTracker = QueuedUploadTracker()
  private let pathMonitor: any PathMonitor
  private let monitorRun: SharedRun
  private let opened = Mutex<OutboxSync?>(nil)

  /// The session's path now, as its monitor says (no probe): what the path policy reads for
  /// work the session starts itself (decision 2610).
  /// - Returns: the path.
  package func currentPath() async -> NetworkPath { await pathMonitor.snapshot() }

  init(
    environment: CourierEnvironment, pathMonitor: any PathMonitor, monitorRun: SharedRun,
    removal: DeliveredBodyRemoval
  ) {
    self.environment = environment
    var articles = CollectionDescription.articles
    articles.offlineAttachments = environment.config.offlineArticlePhotos
    declared = [articles] + environment.config.collections
    self.removal = removal
    self.pathMonitor = pathMonitor
    self.monitorRun = monitorRun
  }

  /// The store's sending side, opening the store the first time.
  /// - Parameter warn: told when the data folder's permissions were tightened as it opened.
  /// - Returns: the sending side.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  func open(warn: @escaping @Sendable (String) -> Void) throws -> OutboxSync {
    try opened.withLock { opened in
      if let opened { return opened }
      let shared = makeOutboxSync(store: try environment.openLocalStore(warn: warn))
      opened = shared
      return shared
    }
  }

  /// The queued uploads' files in the data folder (decision 1302). Made when used, not with
  /// the session: the path's `URL` appending and Foundation's copy of the environment were a
  /// seventh of `courier status`, which never queues an upload.
  var queuedUploadStore: FileQueuedUploadStore {
    Self.queuedUploadStore(environment: environment, removal: removal)
  }

  private static func queuedUploadStore(
    environment: CourierEnvironment, removal: DeliveredBodyRemoval
  ) -> FileQueuedUploadStore {
    FileQueuedUploadStore(
      directory: environment.config.dataDirectory.appendingPathComponent("queued-uploads"),
      stopAt: getenv("COURIER_TEST_STOP_AT").map { String(cString: $0) },
      removal: removal)
  }

  private func makeOutboxSync(store: any LocalStore) -> OutboxSync {
    let environment = environment
    let config = environment.config
    let removal = removal
    let folder = FileURLPath.of("queued-uploads", in: config.dataDirectory)
    let declared = declared
    // Bytes no entry points to (delivered, discarded, or kept by a process killed before its
    // entry was committed) go when the store opens, after each pass and discard, and before
    // each queued upload is sent. No folder, nothing to sweep: the upload store (and its URLs,
    // a conformance scan on their first use: FileURLPath) is not even made.
    let sweep: @Sendable () -> Void = {
      var info = stat()
      guard stat(folder, &info) == 0 else { return }
      Self.queuedUploadStore(environment: environment, removal: removal).sweep {
        try Self.liveUploads(store)
      }
    }
    sweep()
    // The outbox and the queued uploads, observed around the replayer (which logs and times
    // its passes itself).
    let observation = ReplayObservation(
      metrics: environment.metrics, store: store,
      sendingUploads: { [uploadTracker] in Set(uploadTracker.sending.keys) })
    // The replayer is made when something needs it (OutboxSync): an offline add does not.
    return OutboxSync(
      store: store, observation: observation,
      makeReplayer: { [pathMonitor, declared, uploadTracker] in
        let replayer = OutboxReplayer(
          store: store, pathMonitor: pathMonitor,
          configuration: Self.replayConfiguration(
            config, declared: declared, files: folder, monitor: pathMonitor),
          now: { Date() }, clock: ContinuousClock(), random: SystemRandomSource(),
          logger: environment.logger, metrics: environment.metrics)
        for collection in declared {
          replayer.register(
            Self.route(
              collection, environment: environment,
              store: Self.queuedUploadStore(environment: environment, removal: removal),
              tracker: uploadTracker))
        }
        // Queued uploads replay in outbox order with every collection's writes (decision 1302).
        replayer.register(
          QueuedUploads.route(
            environment: environment, tracker: uploadTracker,
            store: Self.queuedUploadStore(environment: environment, removal: removal),
            tidy: sweep, changed: { observation.recordOutbox() }))
        return replayer
      },
      lock: environment.localStoreIsShared
        ? SharedSyncLock(directory: config.dataDirectory) : nil,
      monitor: monitorRun, tidy: sweep,
      route: { [uploadTracker] collection, resolver in
        Self.route(
          collection, environment: environment,
          store: Self.queuedUploadStore(environment: environment, removal: removal),
          tracker: uploadTracker, resolver: resolver)
      },
      attachments: {
        AttachmentQueue(
          compressor: environment.compressor,
          store: Self.queuedUploadStore(environment: environment, removal: removal),
          tusEndpoint: config.attachmentUploadURL
            ?? (try? environment.client.url("/uploads")) ?? config.baseURL,
          // Another server's tus endpoint (decision 2515): tus only, no form to fall back to.
          formTarget: config.attachmentUploadURL != nil
            ? nil : (try? environment.client.url("/photos")) ?? config.baseURL)
      })
  }

  /// The ids whose files in the queued uploads' folder an outbox entry still needs: each
  /// queued upload's, and each attachment a compound write's payload names (decision 2520), in
  /// any collection: the sweep runs when the store opens, before a collection declared in code
  /// is opened again, and must not take the copy its pending write still names.
  static func liveUploads(_ store: any LocalStore) throws -> Set<String> {
    var live = Set<String>()
    for entry in try store.entries() {
      if entry.key.collection == QueuedUpload.collection {
        live.insert(entry.key.id)
      } else if case .object(let members) = entry.operation.payload {
        for value in members.values {
          if let id = Attachment.localID(value) { live.insert(id) }
        }
      }
    }
    return live
  }

  /// The replayer's settings: the configuration's concurrency and path policy, the work each
  /// entry is, and the captive-portal check a reply that is not the server's asks for.
  static func replayConfiguration(
    _ config: CourierConfig, declared: [CollectionDescription], files: String,
    monitor: any PathMonitor
  ) -> OutboxReplayer.Configuration {
    var configuration = OutboxReplayer.Configuration(
      maxConcurrentSends: config.replayConcurrency, pathPolicy: config.pathPolicy,
      allowsExpensive: config.allowsExpensiveNetworkAccess,
      work: work(declared: declared, files: files))
    if let probing = monitor as? PortalProbingMonitor {
      configuration.onNotTheServer = { _ = await probing.recheck() }
    }
    return configuration
  }

  /// The work an outbox entry is, for the path policy (decision 2610): a queued upload, a
  /// compound write whose files are not stored yet (an upload of their kept bytes together),
  /// else a record write.
  /// - Parameters:
  ///   - declared: the session's collections (their attachment fields).
  ///   - files: the queued uploads' folder, where a compound write's files are kept.
  /// - Returns: the classification.
  static func work(declared: [CollectionDescription], files: String)
    -> @Sendable (OutboxEntry)
    -> (work: PathPolicy.Work, bytes: Int64?, allowsExpensive: Bool)
  {
    let fields = Dictionary(
      declared.filter { !$0.attachments.isEmpty }.map { ($0.name, $0.attachments) },
      uniquingKeysWith: { first, _ in first })
    return { entry in
      guard let attachments = fields[entry.key.collection] else {
        return PathPolicy.work(of: entry)
      }
      let pending = Attachment.pending(in: entry.operation.payload, fields: attachments)
      guard !pending.isEmpty else { return (.writes, nil, false) }
      var bytes: Int64 = 0
      for part in pending {
        var info = stat()
        // A kept file that cannot be read counts as large: its send fails on its own.
        guard stat(files + "/" + part.id + ".body", &info) == 0 else {
          return (.uploads, nil, false)
        }
        bytes += Int64(info.st_size)
      }
      return (.uploads, bytes, false)
    }
  }

  /// A collection's replay route: its records' sender, or, when it has attachment fields,
  /// the compound writes' sender over it (decision 2520).
  static func route(
    _ collection: CollectionDescription, environment: CourierEnvironment,
    store: FileQueuedUploadStore, tracker: QueuedUploadTracker? = nil,
    resolver: FieldResolver? = nil
  ) -> ReplayRoute {
    let config = environment.config
    let decision = ReplayDecision(
      policy: config.conflictPolicy, collection: collection, resolver: resolver)
    guard !collection.attachments.isEmpty else {
      return .records(collection, client: environment.client, decision: decision)
    }
    // The queued uploads' own sender: a compound write's file speaks the configured IETF
    // interop version like any queued upload (decision 2707).
    let files = QueuedUploads.sender(environment: environment, store: store)
    return ReplayRoute(
      collection: collection.name,
      sender: AttachmentSender(
        records: RecordSender(client: environment.client, collection: collection), files: files,
        fileProgress: tracker.map { tracker in
          AttachmentSender.FileProgress(
            began: { tracker.began($0, at: store.resumeRecords.load($0)?.confirmedOffset) },
            progressed: { tracker.progressed($0, $1) }, ended: { tracker.ended($0) })
        }),
      decision: decision)
  }
}
