import CoreMetrics
import CourierCore
import CourierDomain
import CourierPorts
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

/// Courier for one server, batteries included: log in, upload photos with progress, follow the
/// network path, and keep articles offline first (cached at once, refreshed, written locally
/// and sent when the network allows).
///
/// ```swift
/// let courier = try CourierSession.fromEnvironment()       // COURIER_BASE_URL, config file…
/// try await courier.login(username: "alice", password: "secret")
/// for try await state in courier.upload(photo, title: "Beach") { print(state) }
/// let articles = try courier.articles()
/// _ = try await articles.add(title: "Hello")
/// _ = try await articles.sync()
/// ```
///
/// Every adapter is chosen by the configuration (defaults, then the config file, then
/// environment variables, then what you set) and any one can be replaced with
/// ``AdapterOverrides`` in tests. The underlying pieces stay public: ``environment`` has the
/// request pipeline, the path monitor and the compressor.
///
/// Give it a `Logger` and a `MetricsFactory` of the application's (`logger:` and `metrics:`)
/// to see its requests, retries, replays and path changes; by default it logs nowhere and
/// records in the global metrics system (the article "Metrics and logging").
public final class CourierSession: Sendable {
  /// The composition root this session uses: configuration, pipeline and adapters.
  public let environment: CourierEnvironment
  /// The path monitor the session follows: the environment's, or a smoothed one over it.
  public let pathMonitor: any PathMonitor
  /// Who removes a delivered queued upload's kept bytes (decision 1303 §3).
  public let deliveredBodyRemoval: DeliveredBodyRemoval
  private let monitorRun: SharedRun
  /// The local store's sending side, opened on first use and shared by every collection.
  private let outbox = Mutex<OutboxSync?>(nil)
  private let articleStore = Mutex<Articles?>(nil)
  private let recordStores = Mutex<[String: Records]>([:])
  /// The queued uploads' files in the data folder (decision 1302). Made when used, not with
  /// the session: the path's `URL` appending and Foundation's copy of the environment were a
  /// seventh of `courier status`, which never queues an upload (callgrind, issue 14).
  var queuedUploadStore: FileQueuedUploadStore {
    Self.queuedUploadStore(environment: environment, removal: deliveredBodyRemoval)
  }

  private static func queuedUploadStore(
    environment: CourierEnvironment, removal: DeliveredBodyRemoval
  ) -> FileQueuedUploadStore {
    FileQueuedUploadStore(
      directory: environment.config.dataDirectory.appendingPathComponent("queued-uploads"),
      stopAt: getenv("COURIER_TEST_STOP_AT").map { String(cString: $0) },
      removal: removal)
  }
  private let uploadTracker = QueuedUploadTracker()

  /// A session with the adapters named in `config`, or the ones in `overrides`.
  /// - Parameters:
  ///   - config: the configuration (see ``ConfigLoader``).
  ///   - overrides: adapters to use instead of the configured ones (fakes in tests).
  ///   - logger: where requests, retry decisions, replays and path changes are logged; by
  ///     default nowhere.
  ///   - metrics: the application's metrics backend; by default the global system's factory.
  /// - Throws: `ConfigError` for an adapter this build cannot provide.
  public convenience init(
    config: CourierConfig, overrides: AdapterOverrides = AdapterOverrides(),
    logger: Logger = .courierDiscarding, metrics: any MetricsFactory = MetricsSystem.factory
  ) throws {
    self.init(
      environment: try CourierEnvironment(
        config: config, overrides: overrides, logger: logger, metrics: metrics))
  }

  /// A session over an environment built already (the apps build theirs from their flags).
  /// - Parameters:
  ///   - environment: the composition root.
  ///   - pathSmoothing: how long a new path must hold before ``paths()`` and the articles'
  ///     replays see it (an interface skipping blips); nil to follow the monitor as it is.
  ///   - clock: the clock those delays are measured on.
  ///   - deliveredBodyRemoval: who removes a delivered queued upload's kept bytes:
  ///     `.inProcess` (the default: no process is ever made behind the app's back) or
  ///     `.detachedProcess`, for a command that owns its process (`courier` chooses it).
  public init(
    environment: CourierEnvironment, pathSmoothing: PathDebounceDelays? = nil,
    clock: any Clock<Duration> = ContinuousClock(),
    deliveredBodyRemoval: DeliveredBodyRemoval = .inProcess
  ) {
    self.environment = environment
    let monitor: any PathMonitor
    if let pathSmoothing {
      monitor = ConnectivityModel(
        monitor: environment.pathMonitor, clock: clock, delays: pathSmoothing)
    } else {
      monitor = environment.pathMonitor
    }
    pathMonitor = monitor
    let paths = PathObservation(metrics: environment.metrics, logger: environment.logger)
    if paths.isEnabled {
      // The one run every listener shares counts and logs each change once.
      monitorRun = SharedRun {
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { await paths.follow(monitor) }
          defer { group.cancelAll() }
          try await monitor.run()
        }
      }
    } else {
      monitorRun = SharedRun { try await monitor.run() }
    }
    self.deliveredBodyRemoval = deliveredBodyRemoval
  }

  /// A session for `baseURL` with the defaults (libcurl on Linux, netlink, SQLite in the XDG
  /// data folder), then what `configure` changes.
  /// - Parameters:
  ///   - baseURL: the server.
  ///   - logger: where the session logs; by default nowhere.
  ///   - metrics: the application's metrics backend; by default the global system's factory.
  ///   - configure: changes to the defaults (data folder, timeout, retry policy…).
  /// - Returns: the session.
  /// - Throws: `ConfigError` for an adapter this build cannot provide.
  public static func connecting(
    to baseURL: URL, logger: Logger = .courierDiscarding,
    metrics: any MetricsFactory = MetricsSystem.factory,
    configure: (inout CourierConfig) -> Void = { _ in }
  ) throws -> CourierSession {
    var config = CourierConfig(environment: ProcessInfo.processInfo.environment)
    config.baseURL = baseURL
    configure(&config)
    return try CourierSession(config: config, logger: logger, metrics: metrics)
  }

  /// A session configured the way the `courier` command is: defaults, then the config file
  /// (`$XDG_CONFIG_HOME/courier/config.json` when present), then `COURIER_*` environment
  /// variables.
  /// - Parameters:
  ///   - environment: the process environment.
  ///   - logger: where the session logs; by default nowhere.
  ///   - metrics: the application's metrics backend; by default the global system's factory.
  /// - Returns: the session.
  /// - Throws: `ConfigError` naming the file or variable and the key that is wrong.
  public static func fromEnvironment(
    _ environment: [String: String] = ProcessInfo.processInfo.environment,
    logger: Logger = .courierDiscarding, metrics: any MetricsFactory = MetricsSystem.factory
  ) throws -> CourierSession {
    let config = try ConfigLoader.load(
      flags: [:], environment: environment, readFile: ConfigLoader.readFileIfPresent)
    return try CourierSession(config: config, logger: logger, metrics: metrics)
  }

  /// The server's base URL.
  public var baseURL: URL { environment.config.baseURL }

  // MARK: - Session

  /// Logs in and keeps the session (in the data folder, private to the user).
  /// - Parameters:
  ///   - username: the user name.
  ///   - password: the password.
  /// - Throws: `CourierError`: `.unauthorized` for wrong credentials, a transport kind when
  ///   the server cannot be reached, `.fileUnavailable` when the session cannot be saved.
  public func login(username: String, password: String) async throws {
    // Never through the auth decorator (there is no session to refresh yet), but retried
    // like any call: a 503 or a reset during a login is as transient as anywhere else.
    let (_, body) = try await environment.loginClient.send(
      .post, "/auth/token", json: ["username": username, "password": password])
    let credentials = try TokenResponse.credentials(from: body.bytes, now: Date())
    do {
      try environment.credentials.save(credentials)
    } catch {
      throw CourierError(
        .fileUnavailable,
        serverMessage: "Logged in, but the session couldn't be saved in "
          + "\(environment.config.dataDirectory.path).",
        underlying: String(describing: error))
    }
  }

  /// Forgets the session.
  /// - Throws: `StoreError` when the session file cannot be removed.
  public func logout() throws { try environment.credentials.clear() }

  /// Whether a session is saved (it may have expired; the next request refreshes it).
  public var isLoggedIn: Bool { ((try? environment.credentials.load()) ?? nil) != nil }

  // MARK: - Uploads

  /// Uploads a file to the server's photos endpoint: an image is downsampled and compressed
  /// (JPEG 0.7, orientation applied, location data removed), anything else is sent as it is,
  /// streamed from disk as `multipart/form-data`.
  ///
  /// Iterate the stream for progress; its last element is `.succeeded`, or the stream throws
  /// the `CourierError` that ended the upload. Stopping the iteration cancels the upload and
  /// removes its temporary files.
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the photo's title field.
  ///   - fields: other form fields, in order.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the upload's states.
  public func upload(
    _ file: URL, title: String? = nil, fields: [(name: String, value: String)] = [],
    compress: Bool = true, compression: CompressionOptions = CompressionOptions()
  ) -> AsyncThrowingStream<UploadState, any Error> {
    let request: UploadRequest
    do {
      request = UploadRequest(
        file: file, target: try environment.client.url("/photos"), title: title,
        fields: fields.map { MultipartPart.text($0.name, $0.value) }, compress: compress,
        compression: compression, confirmation: .record)
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: CourierError.wrapping(error)) }
    }
    return upload(request)
  }

  /// Uploads as `request` says (another target, a fixed Idempotency-Key, what the reply must
  /// show), with the same stream as ``upload(_:title:fields:compress:compression:)``.
  /// - Parameter request: the upload.
  /// - Returns: the upload's states; the last is `.succeeded`, or the stream throws.
  public func upload(_ request: UploadRequest) -> AsyncThrowingStream<UploadState, any Error> {
    uploader().states(for: request)
  }

  /// Uploads in the caller's task: when it returns or throws, even on cancellation, the
  /// upload's temporary files are gone.
  /// - Parameters:
  ///   - request: the upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`, from any
  ///     thread.
  /// - Returns: the result: the server's reply and what was sent.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, the classified failure with
  ///   its attempts, `cancelled`).
  public func upload(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> UploadResult {
    try await uploader().perform(request, onState: onState)
  }

  private func uploader() -> Uploader {
    Uploader(
      transport: environment.client.transport, compressor: environment.compressor,
      options: environment.client.options)
  }

  /// Uploads a file resumably with tus 1.0.0 (decision 1301), to the server's `/uploads` or
  /// to `endpoint`: compressed once like ``upload(_:title:fields:compress:compression:)``, then
  /// sent in checksummed chunks. An interrupted transfer resumes where the server stopped
  /// (a `HEAD`, then only the rest), also in a new process: the upload's record is kept in
  /// the data folder's `uploads/` until the server confirms the last byte.
  ///
  /// A resumed upload's first `.uploading` is at the bytes the server already held (a bar
  /// does not restart from 0; the result's `resumedAt` says where); its last element is `.succeeded` (the result names the upload
  /// URL and the stored photo), or it throws the `CourierError` that ended the upload.
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the `title` metadata (the file's name when nil).
  ///   - endpoint: another tus server's creation URL; nil for `{base}/uploads`, whose answer
  ///     must name the stored photo (`Courier-Photo-Id`) to count as delivered.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the upload's states.
  public func uploadResumable(
    _ file: URL, title: String? = nil, to endpoint: URL? = nil, compress: Bool = true,
    compression: CompressionOptions = CompressionOptions()
  ) -> AsyncThrowingStream<UploadState, any Error> {
    let request: UploadRequest
    do {
      request = UploadRequest(
        file: file, target: try endpoint ?? environment.client.url("/uploads"), title: title,
        compress: compress, compression: compression,
        confirmation: endpoint == nil ? .record : .status)
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: CourierError.wrapping(error)) }
    }
    return resumableUploader().states(for: request)
  }

  /// Uploads resumably in the caller's task, as `request` says (`target` is the tus creation
  /// URL; `confirmation` `.record` requires `Courier-Photo-Id`); when it returns or throws the
  /// temporary files are gone, and the resume record is kept unless the upload completed.
  /// - Parameters:
  ///   - request: the upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying`, from any
  ///     thread; a resumed upload's first `uploading` is at the offset the server held.
  ///   - onResume: told `(offset, total)` when the upload goes on from bytes the server
  ///     already held, before that `uploading`.
  /// - Returns: the result: the answer that proved completion, the upload URL, the photo id.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, `invalidResponse` for an
  ///   answer that would risk a damaged file, the classified failure, `cancelled`).
  public func uploadResumable(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    onResume: @escaping @Sendable (_ offset: Int64, _ total: Int64) -> Void = { _, _ in }
  ) async throws -> UploadResult {
    try await resumableUploader().perform(request, onState: onState, onResume: onResume)
  }

  private func resumableUploader() -> TusUploader<ContinuousClock> {
    let config = environment.config
    // The executor logs its decisions to the client's logger, as the pipeline's does.
    let options = environment.client.options
    return TusUploader(
      transport: environment.singleAttemptTransport,
      executor: RetryExecutor(
        policy: config.retry, clock: ContinuousClock(), metrics: environment.metrics),
      compressor: environment.compressor,
      store: FileResumableUploadStore(
        directory: config.dataDirectory.appendingPathComponent("uploads")),
      options: options, hasher: environment.fileHasher)
  }

  // MARK: - Queued uploads

  /// Queues an upload in the outbox and returns at once, with or without a network (decision
  /// 1302): the file is compressed once with the rules of
  /// ``upload(_:title:fields:compress:compression:)``, the exact bytes to send are kept in the
  /// data folder and an outbox entry describing them is committed (a crash leaves both or
  /// neither). ``Articles/sync(activity:)``, ``Articles/watch(activity:)`` and the terminal UI
  /// send it in outbox order with the other writes, under one `Idempotency-Key` for its whole
  /// life: with tus 1.0.0 when it is resumable (an interruption, even `kill -9`, resumes where
  /// the server stopped) or when the target speaks it, else as one multipart POST. The bytes
  /// are removed once the server proves it stored them; a refusal (4xx) keeps the entry and
  /// its bytes until ``Articles/discard(operationID:)``.
  ///
  /// ```swift
  /// let entry = try await courier.queueUpload(video, title: "Train")
  /// _ = try await courier.articles().sync()        // sends it, or keeps it for later
  /// ```
  /// - Parameters:
  ///   - file: the file to send.
  ///   - title: the title (the file's name when nil).
  ///   - fields: other text fields, in order.
  ///   - target: another target (another tus server, or a multipart URL on the base URL's
  ///     server); nil for the base URL's `/uploads` (tus) or `/photos` (multipart), whose
  ///     answers must name the stored photo to count as delivered.
  ///   - resumable: true for tus, false for multipart; nil for the configuration's
  ///     `resumable_uploads`, and otherwise tus when the target answers `OPTIONS` as a tus
  ///     server.
  ///   - compress: false to send the file's bytes unchanged.
  ///   - compression: the longest edge, JPEG quality and metadata rule for an image.
  /// - Returns: the outbox entry, pending; `key.id` names the upload.
  /// - Throws: `CourierError` (`fileUnavailable`, `invalidInput`, `localStore` when the data
  ///   folder cannot take it: nothing is left then).
  public func queueUpload(
    _ file: URL, title: String? = nil, fields: [(name: String, value: String)] = [],
    to target: URL? = nil, resumable: Bool? = nil, compress: Bool = true,
    compression: CompressionOptions = CompressionOptions()
  ) async throws -> OutboxEntry {
    let client = environment.client
    let transfer: QueuedUpload.Transfer =
      switch resumable ?? (environment.config.resumableUploads ? true : nil) {
      case true?: .tus
      case false?: .multipart
      case nil: .auto
      }
    let request = UploadRequest(
      file: file, target: try target ?? client.url(transfer == .tus ? "/uploads" : "/photos"),
      title: title, fields: fields.map { MultipartPart.text($0.name, $0.value) },
      compress: compress, compression: compression,
      confirmation: target == nil ? .record : (transfer == .tus ? .status : .json))
    let tusEndpoint = transfer == .auto ? try target ?? client.url("/uploads") : nil
    return try await queueUpload(
      request, transfer: transfer, tusEndpoint: tusEndpoint,
      tusConfirmation: target == nil ? .record : .status)
  }

  /// Queues an upload as `request` says (see ``queueUpload(_:title:fields:to:resumable:compress:compression:)``).
  /// - Parameters:
  ///   - request: the file, fields and compression; `target` and `confirmation` are the
  ///     multipart ones, or the tus ones for `.tus` without `tusEndpoint`; a UUID
  ///     `idempotencyKey` becomes the entry's operation id.
  ///   - transfer: tus, multipart, or tus when `tusEndpoint` speaks it.
  ///   - tusEndpoint: the tus creation URL for `.auto` (and `.tus`, when not `target`).
  ///   - tusConfirmation: what the tus completion must show.
  ///   - onState: told `compressing` and `prepared`.
  /// - Returns: the outbox entry, pending.
  /// - Throws: as the other `queueUpload`; `StoreError` when the local store cannot be opened.
  public func queueUpload(
    _ request: UploadRequest, transfer: QueuedUpload.Transfer, tusEndpoint: URL? = nil,
    tusConfirmation: DeliveryProof.UploadConfirmation = .status,
    onState: @escaping @Sendable (UploadState) -> Void = { _ in }
  ) async throws -> OutboxEntry {
    let shared = try outboxSync(warn: PrivateFiles.warnOnStandardError)
    let queue = UploadQueue(
      compressor: environment.compressor, store: queuedUploadStore, outbox: shared.store)
    let entry = try await queue.enqueue(
      request, transfer: transfer, tusEndpoint: tusEndpoint, tusConfirmation: tusConfirmation,
      onState: onState)
    shared.replayer.reloadState()
    shared.observation.recordOutbox()
    // While a watch runs, the store's run loop sends it now (as it does any write).
    shared.replayer.requestReplay()
    return entry
  }

  /// The queued uploads in the outbox, in order, each with the bytes the server confirmed and,
  /// while this process sends it, the bytes sent so far.
  /// - Returns: one progress per queued upload entry (pending or refused).
  /// - Throws: `StoreError` when the local store cannot be opened or read.
  public func queuedUploads() throws -> [QueuedUploadProgress] {
    // The uploads' entries only: this runs after every change of the sync state, and a
    // replay of thousands of writes must not decode them all each time.
    let entries = try outboxSync(warn: PrivateFiles.warnOnStandardError).store.entries(
      in: QueuedUpload.collection)
    let sending = uploadTracker.sending
    let started = uploadTracker.started
    let store = queuedUploadStore
    return entries.map { entry in
      let id = entry.key.id
      let upload = try? QueuedUpload(payload: entry.operation.payload)
      var confirmed = store.resumeRecords.load(id)?.confirmedOffset ?? 0
      if store.isDelivered(id) { confirmed = upload?.length ?? confirmed }
      return QueuedUploadProgress(
        entry: entry, upload: upload, confirmed: confirmed, sending: sending[id],
        resumedAt: sending[id] == nil ? nil : started[id])
    }
  }

  /// ``queuedUploads()`` now, then after every change: a transfer's progress (at most ten
  /// times a second), an upload queued, sent, refused or discarded.
  /// - Returns: the stream (the newest list only, for a slow reader); it ends when the local
  ///   store cannot be opened.
  public func queuedUploadUpdates() -> AsyncStream<[QueuedUploadProgress]> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: [QueuedUploadProgress].self, bufferingPolicy: .bufferingNewest(1))
    let tracker = uploadTracker
    let task = Task {
      guard let articles = try? self.articles() else {
        continuation.finish()
        return
      }
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          for await _ in tracker.changes() {
            if let list = try? self.queuedUploads() { continuation.yield(list) }
          }
        }
        group.addTask {
          for await _ in articles.states() { tracker.notify() }
        }
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private static func queuedUploadSender(
    environment: CourierEnvironment, tracker uploadTracker: QueuedUploadTracker,
    store queuedUploadStore: FileQueuedUploadStore, tidy: @escaping @Sendable () -> Void,
    changed: @escaping @Sendable () -> Void
  ) -> any ReplaySender {
    let config = environment.config
    let sender = QueuedUploadSender(
      transport: environment.client.transport,
      singleAttemptTransport: environment.singleAttemptTransport,
      executor: RetryExecutor(
        policy: config.retry, clock: ContinuousClock(), metrics: environment.metrics),
      store: queuedUploadStore, options: environment.client.options,
      hasher: environment.fileHasher)
    let records = queuedUploadStore.resumeRecords
    return TrackedReplaySender(
      base: sender, tracker: uploadTracker, tidy: tidy,
      confirmed: { records.load($0)?.confirmedOffset }, changed: changed)
  }

  /// The ids of the queued uploads the outbox holds, whatever their state.
  static func uploadIDs(in store: any LocalStore) throws -> Set<String> {
    Set(try store.entries(in: QueuedUpload.collection).map(\.key.id))
  }

  // MARK: - Network path

  /// The network path: the current one first, then each change, for as long as it is
  /// iterated (the monitor runs while someone listens). A hint for the interface and for
  /// replays: requests are never held back because of it.
  /// - Returns: the paths.
  public func paths() -> AsyncStream<NetworkPath> {
    let monitor = pathMonitor
    let monitorRun = monitorRun
    let (stream, continuation) = AsyncStream.makeStream(of: NetworkPath.self)
    let task = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await monitorRun.run() }
        group.addTask {
          for await path in monitor.updates() { continuation.yield(path) }
        }
        await group.next()
        group.cancelAll()
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Whether trying the server now is pointless: the system, asked once (`PathMonitor.snapshot()`),
  /// has no usable path, or, for a server on this machine (which needs no route), its loopback
  /// link is down. A hint for skipping an automatic send, never a reason to refuse one asked
  /// for.
  /// - Returns: true when the path is known to be down for this server.
  public func serverIsUnreachable() async -> Bool {
    // A server on this machine needs no route, only the loopback link up.
    if let host = baseURL.host, Self.isLoopback(host) { return !Self.loopbackIsUp() }
    let status = await environment.pathMonitor.snapshot().status
    return status == .unsatisfied || status == .requiresConnection
  }

  /// Whether a loopback interface is up and running; true when that cannot be told, so that
  /// nothing is skipped on a doubt.
  static func loopbackIsUp() -> Bool {
    #if os(Linux)
      // Linux gives every network namespace one loopback, `lo`: its flags in one `ioctl`,
      // where `getifaddrs` dumps every link and address over netlink (issue 14). Renamed (or
      // not a loopback), every interface is looked at.
      if let flags = linuxInterfaceFlags("lo"), flags & Int32(IFF_LOOPBACK) != 0 {
        let wanted = Int32(IFF_UP | IFF_RUNNING)
        return flags & wanted == wanted
      }
    #endif
    return anyLoopbackIsUp()
  }

  #if os(Linux)
    /// An interface's flags (`SIOCGIFFLAGS`), or nil when it cannot be asked or does not exist.
    static func linuxInterfaceFlags(_ name: String) -> Int32? {
      let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { return nil }
      defer { _ = Glibc.close(fd) }
      var request = ifreq()
      let bytes = Array(name.utf8)
      guard bytes.count < MemoryLayout.size(ofValue: request.ifr_ifrn.ifrn_name) else { return nil }
      withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { buffer in
        buffer.copyBytes(from: bytes)
      }
      guard ioctl(fd, UInt(SIOCGIFFLAGS), &request) == 0 else { return nil }
      return Int32(request.ifr_ifru.ifru_flags)
    }
  #endif

  /// Whether any interface flagged loopback is up and running (`getifaddrs`); true when that
  /// cannot be told.
  static func anyLoopbackIsUp() -> Bool {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return true }
    defer { freeifaddrs(list) }
    var entry: UnsafeMutablePointer<ifaddrs>? = first
    while let current = entry {
      let flags = Int32(bitPattern: current.pointee.ifa_flags)
      let wanted = Int32(IFF_LOOPBACK | IFF_UP | IFF_RUNNING)
      if flags & wanted == wanted { return true }
      entry = current.pointee.ifa_next
    }
    return false
  }

  static func isLoopback(_ host: String) -> Bool {
    // The brackets of an IPv6 literal trimmed by hand: Foundation's `trimmingCharacters(in:)`
    // with a `CharacterSet` was a tenth of what an offline `articles add` cost (issue 14).
    var host = Substring(host.lowercased())
    while let first = host.first, first == "[" || first == "]" { host.removeFirst() }
    while let last = host.last, last == "[" || last == "]" { host.removeLast() }
    return host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
      || host.hasPrefix("127.")
  }

  /// The network path now (`.unknown` before the monitor has run).
  public var currentPath: NetworkPath { pathMonitor.currentPath }

  // MARK: - Articles

  /// The articles, offline first: the local store is the source of truth, writes are queued
  /// in a durable outbox and sent in order. Opened on first use and shared afterwards.
  /// - Parameter warn: told when the data folder's permissions were tightened as it was
  ///   opened (standard error by default).
  /// - Returns: the articles.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func articles(
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Articles {
    let shared = try outboxSync(warn: warn)
    return articleStore.withLock { cached in
      if let cached { return cached }
      let environment = environment
      // Made at the first use (with the replayer and the request pipeline): an offline add
      // needs none of them.
      let articles = Articles(shared: shared) { replayer in
        SyncEngine<Article>(
          replayer: replayer, client: environment.client, collection: .articles,
          configuration: SyncEngine<Article>.Configuration(
            conflictPolicy: environment.config.conflictPolicy))
      }
      cached = articles
      return articles
    }
  }

  // MARK: - Any collection

  /// The collections this session syncs: articles, then those the configuration declares
  /// (`collections` in the config file).
  public var collections: [CollectionDescription] {
    [.articles] + environment.config.collections
  }

  /// The records of a declared collection (or `articles` as JSON), offline first, sharing the
  /// outbox, the sync lock and the run loop with every other collection of the data folder.
  /// Opened on first use and shared afterwards.
  /// - Parameters:
  ///   - name: the collection's name, as the config file declares it.
  ///   - warn: told when the data folder's permissions were tightened as it was opened.
  /// - Returns: the records.
  /// - Throws: `CourierError.invalidInput` naming the declared collections when none has this
  ///   name; `StoreError` naming the file when the local store cannot be opened.
  public func records(
    _ name: String, warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Records {
    guard let collection = collections.first(where: { $0.name == name }) else {
      let known = collections.map(\.name).joined(separator: ", ")
      throw CourierError(
        .invalidInput, code: "unknown_collection",
        serverMessage: "No collection is named “\(LogText.escaped(name))” (collections: \(known)); "
          + "declare it under \"collections\" in the config file.")
    }
    return try records(collection, warn: warn)
  }

  /// The records of a collection the caller declares, as ``records(_:warn:)``; its route is
  /// registered on the session's replayer, so `sync()` and `watch()` send its writes.
  /// - Parameters:
  ///   - collection: the declaration.
  ///   - resolver: settles fields both sides changed under the merge policy; nil for last
  ///     write wins per field.
  ///   - warn: told when the data folder's permissions were tightened as it was opened.
  /// - Returns: the records.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func records(
    _ collection: CollectionDescription, resolver: FieldResolver? = nil,
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Records {
    let shared = try outboxSync(warn: warn)
    return recordStores.withLock { cached in
      if resolver == nil, let existing = cached[collection.name],
        existing.collection == collection
      {
        return existing
      }
      var configuration = SyncEngine<JSONRecord>.Configuration(
        conflictPolicy: environment.config.conflictPolicy)
      configuration.mergeResolver = resolver
      let engine = SyncEngine<JSONRecord>(
        replayer: shared.replayer, client: environment.client, collection: collection,
        configuration: configuration)
      let records = Records(engine: engine, shared: shared)
      cached[collection.name] = records
      return records
    }
  }

  /// The replayer of this session's local store: one per store, it sends every collection's
  /// outbox entries in outbox order, each through its collection's sender. Register the route
  /// of another kind of entry on it (`OutboxReplayer.register`); `sync()` and `watch()` of any
  /// façade of this session then send those entries too.
  /// - Parameter warn: told when the data folder's permissions were tightened as it was opened.
  /// - Returns: the replayer.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func replayer(
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> OutboxReplayer {
    try outboxSync(warn: warn).replayer
  }

  /// Opens the local store once and builds its replayer, with a route for articles and for
  /// every collection the configuration declares, so a replay sends them all.
  func outboxSync(warn: @escaping @Sendable (String) -> Void) throws -> OutboxSync {
    try outbox.withLock { cached in
      if let cached { return cached }
      let store = try environment.openLocalStore(warn: warn)
      let config = environment.config
      let removal = deliveredBodyRemoval
      let folder = FileURLPath.of("queued-uploads", in: config.dataDirectory)
      // Bytes no entry points to (delivered, discarded, or kept by a process killed before
      // its entry was committed) go when the store opens, after each pass and discard, and
      // before each queued upload is sent. No folder, nothing to sweep: the upload store (and
      // its URLs, a conformance scan on their first use: FileURLPath) is not even made.
      let sweep: @Sendable () -> Void = { [environment] in
        var info = stat()
        guard stat(folder, &info) == 0 else { return }
        Self.queuedUploadStore(environment: environment, removal: removal).sweep {
          try Self.uploadIDs(in: store)
        }
      }
      sweep()
      // Replays, the outbox and the queued uploads, observed around the replayer.
      let observation = ReplayObservation(
        metrics: environment.metrics, logger: environment.logger, store: store,
        sendingUploads: { [uploadTracker] in Set(uploadTracker.sending.keys) })
      // The replayer is made when something needs it (OutboxSync): an offline add does not.
      let shared = OutboxSync(
        store: store, observation: observation,
        makeReplayer: { [environment, pathMonitor, collections, uploadTracker] in
          let replayer = OutboxReplayer(
            store: store, pathMonitor: pathMonitor,
            configuration: OutboxReplayer.Configuration(
              maxConcurrentSends: config.replayConcurrency),
            clock: ContinuousClock(), random: SystemRandomSource())
          for collection in collections {
            replayer.register(
              .records(
                collection, client: environment.client,
                decision: ReplayDecision(policy: config.conflictPolicy, collection: collection)))
          }
          // Queued uploads replay in outbox order with every collection's writes (decision
          // 1302).
          replayer.register(
            ReplayRoute(
              collection: QueuedUpload.collection,
              sender: Self.queuedUploadSender(
                environment: environment, tracker: uploadTracker,
                store: Self.queuedUploadStore(environment: environment, removal: removal),
                tidy: sweep, changed: { observation.recordOutbox() }),
              decision: ReplayDecision(policy: config.conflictPolicy)))
          return replayer
        },
        lock: environment.localStoreIsShared
          ? SharedSyncLock(directory: config.dataDirectory) : nil,
        monitor: monitorRun, tidy: sweep)
      cached = shared
      return shared
    }
  }
}
