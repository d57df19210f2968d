import CoreMetrics
import CourierCore
import CourierDomain
import CourierPorts
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Courier for one server, batteries included: the wiring of every adapter the configuration
/// names, the login, and one door per job: ``uploads`` (now, with progress),
/// ``queuedUploads`` (kept in the outbox until sent), ``collections`` (records offline first,
/// articles among them), ``downloads`` (files kept for offline reading), ``paths`` (the network
/// path), and the outbox they share, sent by
/// ``sync(activity:)`` and ``watch(activity:)``.
///
/// ```swift
/// let courier = try CourierSession.fromEnvironment()       // COURIER_BASE_URL, config file…
/// try await courier.login(username: "alice", password: "secret")
/// for try await state in courier.uploads.send(photo, title: "Beach") { print(state) }
/// let articles = try courier.collections.articles()
/// _ = try await articles.add(title: "Hello")
/// _ = try await courier.sync()                              // every write and queued upload
/// ```
///
/// Every adapter is chosen by the configuration (defaults, then the config file, then
/// environment variables, then what you set) and any one can be replaced with
/// ``AdapterOverrides`` in tests. ``environment`` holds the configuration and the request
/// pipeline (`environment.client`) for calls of your own.
///
/// Give it a `Logger` and a `MetricsFactory` of the application's (`logger:` and `metrics:`)
/// to see its requests, retries, replays and path changes; by default it logs nowhere and
/// records in the global metrics system (the article "Metrics and logging").
public final class CourierSession: Sendable {
  /// The composition root this session uses: configuration, pipeline and adapters.
  public let environment: CourierEnvironment
  /// Who removes a delivered queued upload's kept bytes (decision 1303 §3).
  package let deliveredBodyRemoval: DeliveredBodyRemoval
  /// Photo uploads now, with progress.
  public let uploads: Uploads
  /// Files from the server, resumable and kept for offline reading.
  public let downloads: Downloads
  /// Uploads kept in the outbox and sent by ``sync(activity:)`` with every other write.
  public let queuedUploads: QueuedUploads
  /// The record collections, offline first: articles and every declared one.
  public let collections: Collections
  /// The network path, followed while someone listens.
  public let paths: NetworkPaths
  /// The local store, opened at the first use by any of the above.
  private let store: SessionStore
  /// The files records name, kept offline when their collection asks (decision 2507).
  package let offlineAttachments: OfflineAttachments

  /// A session with the adapters named in `config`, or the ones in `overrides`.
  /// - Parameters:
  ///   - config: the configuration (``CourierConfig/init(environment:)`` for the defaults and
  ///     the environment; ``fromEnvironment(_:logger:metrics:)`` reads the config file too).
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
  /// A delivered queued upload's kept bytes are removed in this process: no process is ever
  /// made behind the app's back.
  /// - Parameters:
  ///   - environment: the composition root.
  ///   - pathSmoothing: how long a new path must hold before ``paths`` and the replays see it
  ///     (an interface skipping blips); nil to follow the monitor as it is.
  ///   - clock: the clock those delays are measured on.
  public convenience init(
    environment: CourierEnvironment, pathSmoothing: PathDebounceDelays? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.init(
      environment: environment, pathSmoothing: pathSmoothing, clock: clock,
      deliveredBodyRemoval: .inProcess)
  }

  /// A session over an environment built already, with who removes a delivered queued
  /// upload's kept bytes: `.inProcess`, or `.detachedProcess` for a command that owns its
  /// process (`courier` chooses it).
  package init(
    environment: CourierEnvironment, pathSmoothing: PathDebounceDelays? = nil,
    clock: any Clock<Duration> = ContinuousClock(),
    deliveredBodyRemoval: DeliveredBodyRemoval
  ) {
    self.environment = environment
    self.deliveredBodyRemoval = deliveredBodyRemoval
    let smoothed: any PathMonitor
    if let pathSmoothing {
      smoothed = ConnectivityModel(
        monitor: environment.pathMonitor, clock: clock, delays: pathSmoothing)
    } else {
      smoothed = environment.pathMonitor
    }
    // Courier's own captive-portal probe over it (decision 2612).
    let monitor: any PathMonitor =
      Self.portalProbe(environment).map {
        PortalProbingMonitor(
          monitor: smoothed, probe: $0, clock: clock, recheck: environment.config.portalRecheck)
      } ?? smoothed
    // The monitor's one run, shared by every listener (it must not run twice at once); when
    // observed, it counts and logs each change once.
    let observation = PathObservation(metrics: environment.metrics, logger: environment.logger)
    let run: SharedRun
    if observation.isEnabled {
      run = SharedRun {
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { await observation.follow(monitor) }
          defer { group.cancelAll() }
          try await monitor.run()
        }
      }
    } else {
      run = SharedRun { try await monitor.run() }
    }
    store = SessionStore(
      environment: environment, pathMonitor: monitor, monitorRun: run,
      removal: deliveredBodyRemoval)
    uploads = Uploads(environment: environment)
    queuedUploads = QueuedUploads(store: store)
    offlineAttachments = OfflineAttachments(
      store: store, pendingWrites: { [queuedUploads] in queuedUploads.referencedURLs() })
    downloads = offlineAttachments.downloads
    collections = Collections(store: store)
    paths = NetworkPaths(
      monitor: monitor, system: environment.linkMonitor, run: run,
      baseURL: environment.config.baseURL)
  }

  /// The captive-portal probe the configuration asks for (decision 2612): the configured URL,
  /// else the server's `GET /health`; nil when `portal_probe_url` is `none`, and by default
  /// over a transport the caller handed in (a test double's scripted replies are not the
  /// probe's to spend; a configured URL still probes through it).
  /// - Parameter environment: the composition root (its base transport, built at the first
  ///   check).
  /// - Returns: the probe, or nil.
  package static func portalProbe(_ environment: CourierEnvironment) -> PortalProbe? {
    let config = environment.config
    guard config.portalProbe, config.portalProbeURL != nil || !environment.transportIsInjected
    else { return nil }
    var base = config.baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = config.portalProbeURL ?? URL(string: base + "/health") else { return nil }
    return PortalProbe(
      transport: { environment.baseTransport }, url: url, captiveAPI: config.captivePortalAPI)
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
  ///   the server cannot be reached, `.fileUnavailable` when the session cannot be saved,
  ///   `.invalidInput` (code `insecure_http`) before anything is sent when the password would
  ///   go over plain `http://` to a host that is not loopback and
  ///   ``CourierConfig/allowsInsecureHTTP`` is off.
  public func login(username: String, password: String) async throws {
    // Never through the auth decorator (there is no session to refresh yet), but retried
    // like any call: a 503 or a reset during a login is as transient as anywhere else.
    // A server that repeats the request in its refusal never shows the password (2421): taken
    // out of the reply before its message is read (and cut), and out of the error after.
    let redaction = SecretRedaction([password])
    let client = environment.loginClient
    let body: ResponseBody
    do {
      var request = try client.request(.post, "/auth/token")
      // The password never goes in clear text off loopback (decision 2431).
      if let url = request.url {
        try InsecureHTTP.check(
          url, allowed: environment.config.allowsInsecureHTTP, context: request.summary)
      }
      request.headerFields[.contentType] = "application/json; charset=utf-8"
      body =
        try await client.exchange(
          request, body: try APIClient.json(["username": username, "password": password]),
          redacting: redaction
        ).body
    } catch let error as CourierError {
      throw redaction.error(error)
    }
    let credentials = try TokenResponse.credentials(from: body.bytes, now: Date())
    // The replies the last identity fetched are not this one's (decision 2513).
    environment.clearResponseCache()
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

  /// Forgets the session, and empties the response cache of `courier get` (the replies were
  /// this session's).
  /// - Throws: `StoreError` when the session file cannot be removed.
  public func logout() throws {
    environment.clearResponseCache()
    try environment.credentials.clear()
  }

  /// Whether a session is saved (it may have expired; the next request refreshes it).
  public var isLoggedIn: Bool { ((try? environment.credentials.load()) ?? nil) != nil }

  // MARK: - The outbox and its sending

  /// The outbox every collection and the queued uploads share, opening the local store the
  /// first time.
  /// - Parameter warn: told when the data folder's permissions were tightened as it was opened
  ///   (standard error by default).
  /// - Returns: the outbox.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func outbox(
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> SessionOutbox {
    SessionOutbox(shared: try store.open(warn: warn))
  }

  /// Sends what waits in the outbox now, in order, each with its `Idempotency-Key`: every
  /// collection's records and the queued uploads (one replayer per store, decision 1202),
  /// until the outbox is empty or a transient failure stops it. Then downloads the files the
  /// records of a collection with `offline_attachments` name, for offline reading.
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: what was sent, refused, in conflict or left pending (and why: `stoppedBy`).
  /// - Throws: ``SyncInProgressError`` when another process is syncing this data folder (it
  ///   will send them; the outbox's state is reloaded first), `StoreError` when the local store
  ///   or the lock file cannot be opened.
  public func sync(activity: String = "sync") async throws -> ReplayReport {
    let report = try await store.open(warn: PrivateFiles.warnOnStandardError).sync(
      activity: activity)
    // The files the records name, for offline reading, where a collection asks (2507).
    _ = await offlineAttachments.fetch()
    return report
  }

  /// Keeps the outbox flowing until cancelled: sends it now, again whenever the network path
  /// comes back and after a backed-off wait when a transient failure stopped it; writes made
  /// meanwhile are sent by themselves, this process's and those another process leaves in the
  /// same data folder because this one holds the lock (noticed with inotify on Linux). Yields
  /// the state at once and on each change. Holds the data folder's sync lock while it runs, and
  /// runs the path monitor (shared with ``paths``). While another process holds the lock (a
  /// `courier sync`, a write's replay, another watch), it waits for it, yielding nothing, and
  /// starts when the lock is free (decision 2426).
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: the states; the stream throws the path monitor's error when it cannot run, or
  ///   `StoreError` when the local store or the lock file cannot be opened.
  public func watch(activity: String = "sync --watch") -> AsyncThrowingStream<SyncState, any Error>
  {
    watch(activity: activity, whileWaiting: { _ in })
  }

  /// ``watch(activity:)``, telling `whileWaiting` who holds the data folder's sync lock when
  /// the watch has to wait for it (and again when the holder changes).
  /// - Parameters:
  ///   - activity: what this process says it is doing, for another's busy message.
  ///   - whileWaiting: told who holds the lock this watch waits for.
  /// - Returns: the states.
  package func watch(
    activity: String, whileWaiting: @escaping @Sendable (SyncLock.Holder) -> Void
  ) -> AsyncThrowingStream<SyncState, any Error> {
    do {
      // The files the records name, for offline reading, as passes end (decision 2516).
      return offlineAttachments.following(
        try store.open(warn: PrivateFiles.warnOnStandardError).watch(
          activity: activity, onHeld: whileWaiting))
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: error) }
    }
  }
}
